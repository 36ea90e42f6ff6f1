/* SPDX-License-Identifier: MIT */
/*
 * What bpfctl's files share: the parsed command line (struct cli), the exit
 * statuses, the commands, and the helpers one file defines for the others.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libbpfbroker.h"
#include "proto/proto.h"
#include "setup.h"

#define EXIT_DENIED 1
#define EXIT_ERROR 2
#define SD_LISTEN_FDS_START 3

/* Long options without a short form. */
enum {
	OPT_NAME = 0x100,
	OPT_SHARE,
	OPT_ALL,
	OPT_USER,
	OPT_SHARED,
	OPT_ATTACH_TYPE,
	OPT_PIN,
	OPT_PROTECT,
	OPT_DATA_IN,
	OPT_CTX_IN,
	OPT_REPEAT,
	OPT_TYPE,
	OPT_LICENSE,
	OPT_PROG_NAME,
	OPT_PROXY,
	OPT_EXIST,
	OPT_NOEXIST,
	OPT_FREEZE,
	OPT_COUNT,
	OPT_PID,
	OPT_RETPROBE,
	OPT_SEMAPHORE,
	OPT_LIBBPF_LOG,
	OPT_SYSTEM,
};

struct cli {
	const char *socket_path;
	bool json;
	struct bpfbroker *b; /* NULL once closed (before exec) */
	struct bpfbroker_load_opts opts;
	struct bpfbroker_global globals[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_map_size sizes[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_program_select programs[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_share shares[PROTO_MAX_SHARES];
	const char *freeze[PROTO_MAX_CONFIG_ITEMS];
	struct bpfctl_setup setup; /* --map-key-size and the like (setup.h) */
	struct bpfbroker_list_opts list;
	const char *attach_type, *data_in, *ctx_in;
	const char *prog_type, *license, *prog_name; /* load-insns, check-insns */
	const char *pid, *semaphore; /* attach uprobe */
	bool retprobe;
	bool pin;
	bool protect;
	bool map_proxy; /* map: through the broker even where bpf() works */
	const char *system; /* check, load, run: --system NAME instead of OBJ.o */
	uint64_t update_flags; /* map update: BPF_ANY, BPF_NOEXIST or BPF_EXIST */
	uint32_t repeat;
	uint64_t count; /* ringbuf: stop after this many records (0: never) */
	/* What followed "--" (attach: the command to run holding the link). */
	bool dashdash;
	char **cmd;
	int n_cmd;
};

/* options.c */
void usage(FILE *f);

/* The options every command takes, for its getopt_long table (short options "jh"). */
#define BPFCTL_COMMON_LONGOPTS                                                                     \
	{"socket", required_argument, NULL, 'S'}, {"json", no_argument, NULL, 'j'},                \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}
/* Take opt if it is one of them (--help prints the usage and exits): whether it was. */
bool cli_common_option(struct cli *c, int opt, const char *arg);
/* Parse options; stop_at_positional keeps everything after the first positional untouched. */
int parse_options(struct cli *c, int argc, char **argv, bool stop_at_positional);
/* Split "REF/NAME" at the last '/' (REF may itself be OWNER/NAME). */
int split_ref(char *arg, const char *what, char **ret_ref, char **ret_name);

/* output.c */
int die_errno(int err, const char *what);
/* Print the broker's error e (or errno k without one), free e: the exit status. */
int report_error(struct cli *c, int k, struct bpfbroker_error *e, const char *what);
void print_check(const struct bpfbroker_result *r);
void print_loaded(struct cli *c, struct bpfbroker_result *r);
void print_json_value(json_object *o);
/* "00 01 02" */
char *format_hex(const uint8_t *buf, size_t size);

/* load.c: close the broker connection and exec argv with fds at 3, 4, ... (LISTEN_FDS). */
int exec_holding(struct cli *c, int *fds, size_t n, const char *names, char **argv);

/* The commands: the rest of the command line in argc/argv; bpfctl's exit status. */
int cmd_check(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_load(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_load_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_check_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_run(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_list(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_show(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_unload(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_attach(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_detach(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_test_run(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_map(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_ringbuf(struct cli *c, struct bpfbroker *b, int argc, char **argv);
int cmd_policy(struct cli *c, struct bpfbroker *b, int argc, char **argv);
/* net.c: parses its own options and connects itself (b is NULL). */
int cmd_net(struct cli *c, struct bpfbroker *b, int argc, char **argv);
