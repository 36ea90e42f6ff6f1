# SPDX-License-Identifier: MIT
# bash completion for bpfctl(1). Installed as "bpfctl" in bash-completion's
# completions directory, which loads it the first time bpfctl is completed.
#
# Named objects, their programs and maps are asked from the broker
# (bpfctl list, bpfctl show), so they complete only while it runs and only
# with what the broker lets you see.

_bpfctl_commands="check run policy doctor load check-insns load-insns list show unload attach detach
	test-run map ringbuf net"
_bpfctl_global_opts="--socket --json -j --help -h"
_bpfctl_load_opts="--global --map-size --map-key-size --map-value-size --inner-map --attach-target --program --object-name --freeze --libbpf-log"
_bpfctl_insns_opts="--type --attach-type --license --prog-name"
# Program types by libbpf's names: those raw instructions are usually for.
_bpfctl_prog_types="cgroup_device cgroup_skb cgroup_sock cgroup_sock_addr cgroup_sockopt
	cgroup_sysctl socket_filter sched_cls xdp"
_bpfctl_cgroup_attach_types="cgroup_inet_ingress cgroup_inet_egress cgroup_inet_sock_create
	cgroup_inet_sock_release cgroup_sock_ops cgroup_device cgroup_inet4_bind cgroup_inet6_bind
	cgroup_inet4_post_bind cgroup_inet6_post_bind cgroup_inet4_connect cgroup_inet6_connect
	cgroup_udp4_sendmsg cgroup_udp6_sendmsg cgroup_udp4_recvmsg cgroup_udp6_recvmsg
	cgroup_inet4_getpeername cgroup_inet6_getpeername cgroup_inet4_getsockname
	cgroup_inet6_getsockname cgroup_sysctl cgroup_getsockopt cgroup_setsockopt"

# bpfctl with the --socket the command line names, if any.
_bpfctl_query()
{
	local i sock=()
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		case ${COMP_WORDS[i]} in
		--socket) sock=(--socket "${COMP_WORDS[i + 1]}") ;;
		--socket=*) sock=("${COMP_WORDS[i]}") ;;
		esac
	done
	"${COMP_WORDS[0]}" "${sock[@]}" "$@" 2>/dev/null
}

# Named objects: "NAME" for mine, "OWNER/NAME" for others' (list prints OWNER/NAME).
_bpfctl_objects()
{
	local me line ref
	me=$(id -un 2>/dev/null)
	while read -r ref line; do
		[[ $line == loaded* ]] || continue
		if [[ ${ref%%/*} == "$me" ]]; then
			printf '%s\n' "${ref#*/}"
		else
			printf '%s\n' "$ref"
		fi
	done < <(_bpfctl_query list "$@")
}

# The programs or maps (what: program, map) of one object: REF/NAME.
_bpfctl_members()
{
	local ref=$1 what=$2 kind name rest
	while read -r kind name rest; do
		[[ $kind == "$what" ]] && printf '%s/%s\n' "$ref" "$name"
	done < <(_bpfctl_query show "$ref")
}

# Complete REF (an object) or, once cur has a "/" after the object, REF/MEMBER.
_bpfctl_complete_ref()
{
	local cur=$1 what=$2 objects ref
	objects=$( { _bpfctl_objects; _bpfctl_objects --shared; } | sort -u)
	if [[ -n $what && $cur == */* ]]; then
		ref=${cur%/*}
		if grep -qxF -- "$ref" <<<"$objects"; then
			COMPREPLY=($(compgen -W "$(_bpfctl_members "$ref" "$what")" -- "$cur"))
			return
		fi
	fi
	COMPREPLY=($(compgen -W "$objects" -- "$cur"))
	# REF/MEMBER: an object name is not the end of the word.
	if [[ -n $what ]]; then
		COMPREPLY=("${COMPREPLY[@]/%//}")
		compopt -o nospace 2>/dev/null
	fi
}

_bpfctl()
{
	local cur prev cmd i n_args=0 after_dashdash=0 args=()
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# Options that take a value.
	case $prev in
	--socket | --data-in | --ctx-in)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return
		;;
	--type)
		COMPREPLY=($(compgen -W "$_bpfctl_prog_types" -- "$cur"))
		return
		;;
	--user)
		COMPREPLY=($(compgen -u -- "$cur"))
		return
		;;
	--attach-type)
		COMPREPLY=($(compgen -W "$_bpfctl_cgroup_attach_types" -- "$cur"))
		return
		;;
	--name)
		COMPREPLY=($(compgen -W "$(_bpfctl_objects)" -- "$cur"))
		return
		;;
	--global | --map-size | --map-key-size | --map-value-size | --inner-map | --attach-target | \
		--program | --object-name | --share | --repeat | --freeze | --count | \
		--semaphore | --license | --prog-name | --system | --allow | --deny | --bind-allow | \
		--bind-deny)
		return
		;;
	--cgroup)
		COMPREPLY=($(compgen -d -- "$cur"))
		compopt -o filenames 2>/dev/null
		return
		;;
	--restrict-ifaces)
		COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
		return
		;;
	--unit)
		# net show --unit: my running --user units.
		COMPREPLY=($(compgen -W "$(systemctl --user list-units --no-legend --plain \
			--state=running 2>/dev/null | awk '{ print $1 }')" -- "$cur"))
		return
		;;
	--pid)
		COMPREPLY=($(compgen -W "$(pgrep -u "$(id -u)" 2>/dev/null)" -- "$cur"))
		return
		;;
	esac

	# The command, and the arguments before the current word (options skipped).
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) [[ -n $cmd ]] && after_dashdash=1 ;;
		--socket | --data-in | --ctx-in | --user | --attach-type | --name | --global | \
			--map-size | --map-key-size | --map-value-size | --inner-map | --attach-target | \
			--program | --object-name | --share | --repeat | --freeze | --count | --pid | \
			--semaphore | --type | --license | --prog-name | --system | --allow | --deny | \
			--restrict-ifaces | --bind-allow | --bind-deny | --cgroup | --unit)
			((i++)) ;;
		-*) ;;
		*)
			if ((after_dashdash)); then
				args+=("${COMP_WORDS[i]}")
			elif [[ -z $cmd ]]; then
				cmd=${COMP_WORDS[i]}
			else
				args+=("${COMP_WORDS[i]}")
			fi
			;;
		esac
	done
	n_args=${#args[@]}

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$_bpfctl_global_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_bpfctl_commands" -- "$cur"))
		fi
		return
	fi

	# After "--" of run, attach and net: a command and its arguments.
	if ((after_dashdash)); then
		if ((${#args[@]} == 0)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
			compopt -o filenames 2>/dev/null
		fi
		return
	fi

	if [[ $cur == -* ]]; then
		local opts=$_bpfctl_global_opts
		case $cmd in
		check | run) opts+=" $_bpfctl_load_opts --name --system --" ;;
		load) opts+=" $_bpfctl_load_opts --name --share --system" ;;
		check-insns) opts+=" $_bpfctl_insns_opts" ;;
		load-insns) opts+=" $_bpfctl_insns_opts --name" ;;
		list) opts+=" --all --user --shared" ;;
		attach) opts+=" --attach-type --pin --protect --pid --retprobe --semaphore --" ;;
		test-run) opts+=" --data-in --ctx-in --repeat" ;;
		map) opts+=" --proxy --noexist --exist" ;;
		ringbuf) opts+=" --count" ;;
		net)
			case ${args[0]-} in
			show) opts+=" --cgroup --unit" ;;
			remove) opts+=" --cgroup" ;;
			list) ;;
			*) opts+=" --allow --deny --accounting --restrict-ifaces --bind-allow --bind-deny --cgroup --" ;;
			esac
			;;
		esac
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi

	case $cmd in
	check | load)
		((n_args == 0)) && _bpfctl_complete_object_file "$cur"
		;;
	check-insns | load-insns)
		# Any file: instructions have no customary suffix.
		if ((n_args == 0)); then
			COMPREPLY=($(compgen -f -- "$cur"))
			compopt -o filenames 2>/dev/null
		fi
		;;
	run)
		if ((n_args == 0)); then
			_bpfctl_complete_object_file "$cur"
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		;;
	show | unload)
		((n_args == 0)) && _bpfctl_complete_ref "$cur" ""
		;;
	detach | test-run)
		((n_args == 0)) && _bpfctl_complete_ref "$cur" program
		;;
	attach)
		case $n_args in
		0) _bpfctl_complete_ref "$cur" program ;;
		1) COMPREPLY=($(compgen -W "cgroup raw_tracepoint tracepoint xdp tc uprobe" -- "$cur")) ;;
		2)
			case ${args[1]} in
			cgroup)
				COMPREPLY=($(compgen -d -- "$cur"))
				compopt -o filenames 2>/dev/null
				;;
			xdp | tc)
				COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
				;;
			uprobe)
				# BINARY:SYMBOL: the binary's path; the symbol is typed after ":".
				[[ $cur != *:* ]] && COMPREPLY=($(compgen -f -- "$cur")) &&
					compopt -o filenames 2>/dev/null
				;;
			esac
			;;
		3)
			[[ ${args[1]} == tc ]] && COMPREPLY=($(compgen -W "ingress egress" -- "$cur"))
			;;
		esac
		;;
	map)
		case $n_args in
		0) COMPREPLY=($(compgen -W "dump lookup update delete" -- "$cur")) ;;
		1) _bpfctl_complete_ref "$cur" map ;;
		esac
		;;
	ringbuf)
		((n_args == 0)) && _bpfctl_complete_ref "$cur" map
		;;
	net)
		((n_args == 0)) && COMPREPLY=($(compgen -W "show remove list" -- "$cur"))
		;;
	esac
}

# BPF objects: *.o files and directories to find them in.
_bpfctl_complete_object_file()
{
	COMPREPLY=($(compgen -f -X '!*.o' -- "$1") $(compgen -d -- "$1"))
	compopt -o filenames 2>/dev/null
}

complete -F _bpfctl bpfctl
