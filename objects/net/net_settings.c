/* SPDX-License-Identifier: MIT */
/* systemd's network settings parsed into the entries of the network objects' maps. */
#include "objects/net/net_settings.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/macro.h"
#include "common/parse.h"

/* What systemd's extract_first_word() separates words with. */
#define WHITESPACE " \t\n\r"

void net_settings_done(struct net_settings *s)
{
	free(s->ip_allow);
	free(s->ip_deny);
	for (size_t i = 0; i < s->n_ifaces; i++)
		free(s->ifaces[i]);
	free(s->ifaces);
	free(s->bind_allow);
	free(s->bind_deny);
	*s = (struct net_settings){};
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* systemd's is_localhost(): RFC 6761's localhost names and the "localdomain" habit. */
static bool is_localhost(const char *s)
{
	return strcasecmp(s, "localhost") == 0 || strcasecmp(s, "localhost.") == 0 ||
	       strcasecmp(s, "localhost.localdomain") == 0 ||
	       strcasecmp(s, "localhost.localdomain.") == 0 || ends_with_nocase(s, ".localhost") ||
	       ends_with_nocase(s, ".localhost.") ||
	       ends_with_nocase(s, ".localhost.localdomain") ||
	       ends_with_nocase(s, ".localhost.localdomain.");
}

static struct net_prefix prefix_make(int family, const char *addr, uint8_t prefixlen)
{
	struct net_prefix p = {.family = family, .prefixlen = prefixlen};

	(void)inet_pton(family, addr, p.addr);
	return p;
}

/* Clear the bits past the prefix length. */
static void prefix_mask(struct net_prefix *p)
{
	size_t size = p->family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < size; i++) {
		unsigned bits = (size_t)p->prefixlen > i * 8 ? p->prefixlen - i * 8 : 0;

		if (bits < 8)
			p->addr[i] &= (uint8_t)(0xff00u >> bits);
	}
}

int net_prefix_parse(const char *word, struct net_prefix ret[2], size_t *ret_n, char **error)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash;
	struct net_prefix p = {};
	size_t len;
	uint64_t prefixlen;

	if (strcmp(word, "any") == 0) {
		ret[0] = prefix_make(AF_INET, "0.0.0.0", 0);
		ret[1] = prefix_make(AF_INET6, "::", 0);
	} else if (is_localhost(word)) {
		ret[0] = prefix_make(AF_INET, "127.0.0.0", 8);
		ret[1] = prefix_make(AF_INET6, "::1", 128);
	} else if (strcmp(word, "link-local") == 0) {
		ret[0] = prefix_make(AF_INET, "169.254.0.0", 16);
		ret[1] = prefix_make(AF_INET6, "fe80::", 64);
	} else if (strcmp(word, "multicast") == 0) {
		ret[0] = prefix_make(AF_INET, "224.0.0.0", 4);
		ret[1] = prefix_make(AF_INET6, "ff00::", 8);
	} else {
		slash = strchr(word, '/');
		len = slash ? (size_t)(slash - word) : strlen(word);
		if (len == 0 || len >= sizeof(addr))
			return error_setf(error, -EINVAL, "not an IP address or prefix: \"%s\"",
					  word);
		memcpy(addr, word, len);
		addr[len] = '\0';
		if (inet_pton(AF_INET, addr, p.addr) == 1)
			p.family = AF_INET;
		else if (inet_pton(AF_INET6, addr, p.addr) == 1)
			p.family = AF_INET6;
		else
			return error_setf(error, -EINVAL, "not an IP address or prefix: \"%s\"",
					  word);
		prefixlen = p.family == AF_INET ? 32 : 128;
		/* Digits only: systemd's strtoul would also take "0x10" or " 16". */
		if (slash && parse_u64(slash + 1, prefixlen, &prefixlen) < 0)
			return error_setf(error, -EINVAL,
					  "invalid prefix length in \"%s\" (0 to %d)", word,
					  p.family == AF_INET ? 32 : 128);
		p.prefixlen = (uint8_t)prefixlen;
		prefix_mask(&p);
		ret[0] = p;
		*ret_n = 1;
		return 0;
	}
	*ret_n = 2;
	return 0;
}

/* A port 1 to 65535 in decimal digits. */
static int port_parse(const char *s, size_t len, uint16_t *ret)
{
	char buf[8];
	uint64_t v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_u64(buf, 65535, &v) < 0 || v == 0)
		return -EINVAL;
	*ret = (uint16_t)v;
	return 0;
}

/* PORT, PORT-PORT (low <= high) or "any". */
static int ports_parse(const char *s, struct net_bind_rule *r)
{
	const char *dash = strchr(s, '-');

	if (strcmp(s, "any") == 0) {
		r->port_min = 0;
		r->port_max = 65535;
		return 0;
	}
	if (!dash)
		return port_parse(s, strlen(s), &r->port_min) < 0 ? -EINVAL
								  : (r->port_max = r->port_min, 0);
	if (port_parse(s, (size_t)(dash - s), &r->port_min) < 0 ||
	    port_parse(dash + 1, strlen(dash + 1), &r->port_max) < 0 || r->port_max < r->port_min)
		return -EINVAL;
	return 0;
}

/*
 * As systemd's parse_socket_bind_item(): ':'-separated tokens, each tried in turn as a family,
 * a protocol and ports, each kind at most once and in that order; no empty token, nothing
 * after the ports.
 */
int net_bind_rule_parse(const char *value, struct net_bind_rule *ret, char **error)
{
	struct net_bind_rule r = {.used = 1, .port_min = 0, .port_max = 65535};
	unsigned next = 0; /* 0: family, 1: protocol, 2: ports, 3: done */
	char token[16];

	for (const char *p = value;;) {
		size_t len = strcspn(p, ":");
		bool parsed = false;

		if (len == 0 || len >= sizeof(token) || next == 3)
			goto invalid;
		memcpy(token, p, len);
		token[len] = '\0';
		while (!parsed && next < 3) {
			if (next == 0 &&
			    (strcmp(token, "ipv4") == 0 || strcmp(token, "ipv6") == 0)) {
				r.family = token[3] == '4' ? AF_INET : AF_INET6;
				parsed = true;
			} else if (next == 1 &&
				   (strcmp(token, "tcp") == 0 || strcmp(token, "udp") == 0)) {
				r.protocol = token[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
				parsed = true;
			} else if (next == 2) {
				if (ports_parse(token, &r) < 0)
					goto invalid;
				parsed = true;
			}
			next++;
		}
		if (!parsed)
			goto invalid;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*ret = r;
	return 0;
invalid:
	return error_setf(error, -EINVAL,
			  "invalid socket bind rule \"%s\" "
			  "(expected [ipv4|ipv6:][tcp|udp:][PORT[-PORT]] or any, ports 1 to 65535)",
			  value);
}

bool net_ifname_is_valid(const char *name)
{
	size_t len = strlen(name);
	uint64_t n;

	if (len == 0 || len >= NET_IFNAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c <= 32 || (unsigned char)*c >= 127 || strchr(":/%", *c))
			return false;
	/* A number would be taken for an interface index. */
	return parse_u64(name, UINT64_MAX, &n) < 0;
}

/*
 * The next whitespace-separated word of *p into buf (size bytes), as systemd's
 * extract_first_word() takes it; with unquote, quotes ('...', "...") group and are removed
 * and a backslash takes the next character as it is. 1: a word; 0: no more; -EINVAL: an
 * unfinished quote or escape, or a word too long for buf.
 */
static int next_word(const char **p, char *buf, size_t size, bool unquote)
{
	const char *s = *p + strspn(*p, WHITESPACE);
	size_t n = 0;
	char quote = 0;

	if (*s == '\0') {
		*p = s;
		return 0;
	}
	for (; *s && (quote || !strchr(WHITESPACE, *s)); s++) {
		char c = *s;

		if (unquote && !quote && (c == '\'' || c == '"')) {
			quote = c;
			continue;
		}
		if (unquote && quote == c) {
			quote = 0;
			continue;
		}
		if (unquote && c == '\\' && quote != '\'') {
			if (*++s == '\0')
				return -EINVAL;
			c = *s;
		}
		if (n + 1 >= size)
			return -EINVAL;
		buf[n++] = c;
	}
	if (quote)
		return -EINVAL;
	buf[n] = '\0';
	*p = s;
	return 1;
}

/* Append n elements of size bytes from items to the array *list of *count. */
static int array_append(void *list, size_t *count, const void *items, size_t n, size_t size)
{
	void **l = list;
	char *grown;

	if (n == 0)
		return 0;
	grown = reallocarray(*l, *count + n, size);
	if (!grown)
		return -ENOMEM;
	memcpy(grown + *count * size, items, n * size);
	*l = grown;
	*count += n;
	return 0;
}

static int ip_assign(struct net_prefix **list, size_t *count, const char *value, char **error)
{
	_cleanup_free_ struct net_prefix *parsed = NULL;
	size_t n_parsed = 0;
	char word[256];
	int k;

	/* Only the empty string resets: whitespace alone is an assignment of nothing. */
	if (value[0] == '\0') {
		free(*list);
		*list = NULL;
		*count = 0;
		return 0;
	}
	for (const char *p = value;;) {
		struct net_prefix two[2];
		size_t n;

		k = next_word(&p, word, sizeof(word), false);
		if (k < 0)
			return error_setf(error, -EINVAL, "invalid IP address list \"%s\"", value);
		if (k == 0)
			break;
		k = net_prefix_parse(word, two, &n, error);
		if (k < 0)
			return k;
		k = array_append(&parsed, &n_parsed, two, n, sizeof(two[0]));
		if (k < 0)
			return k;
	}
	/* Each family's trie holds NET_IP_PREFIXES_MAX keys (duplicates counted: a bound). */
	for (int family = AF_INET; family; family = family == AF_INET ? AF_INET6 : 0) {
		size_t n = 0;

		for (size_t i = 0; i < *count; i++)
			n += (*list)[i].family == family;
		for (size_t i = 0; i < n_parsed; i++)
			n += parsed[i].family == family;
		if (n > NET_IP_PREFIXES_MAX)
			return error_setf(
				error, -E2BIG,
				"too many IP address prefixes (at most %d of each family)",
				NET_IP_PREFIXES_MAX);
	}
	return array_append(list, count, parsed, n_parsed, sizeof(parsed[0]));
}

static int bind_assign(struct net_bind_rule **list, size_t *count, const char *value, char **error)
{
	struct net_bind_rule r;
	int k;

	if (value[0] == '\0') {
		free(*list);
		*list = NULL;
		*count = 0;
		return 0;
	}
	k = net_bind_rule_parse(value, &r, error);
	if (k < 0)
		return k;
	if (*count >= NET_BIND_RULES_MAX)
		return error_setf(error, -E2BIG, "too many socket bind rules (at most %d per list)",
				  NET_BIND_RULES_MAX);
	return array_append(list, count, &r, 1, sizeof(r));
}

static ssize_t iface_find(const struct net_settings *s, const char *name)
{
	for (size_t i = 0; i < s->n_ifaces; i++)
		if (strcmp(s->ifaces[i], name) == 0)
			return (ssize_t)i;
	return -1;
}

/*
 * As systemd: a leading '~' makes the names a deny list. The first assignment after a reset
 * decides the kind of list; a later assignment of the same kind adds names, one of the other
 * kind removes them.
 */
static int ifaces_assign(struct net_settings *s, const char *value, char **error)
{
	bool allow = value[0] != '~';
	char word[NET_IFNAME_MAX + 1];
	const char *p = value + !allow;
	size_t n = 0;
	int k;

	if (value[0] == '\0') {
		for (size_t i = 0; i < s->n_ifaces; i++)
			free(s->ifaces[i]);
		free(s->ifaces);
		s->ifaces = NULL;
		s->n_ifaces = 0;
		s->ifaces_allow_list = false;
		return 0;
	}
	/* Check every name first, so that a refused assignment changes nothing. */
	for (const char *q = p; (k = next_word(&q, word, sizeof(word), true)) != 0; n++)
		if (k < 0 || !net_ifname_is_valid(word))
			return error_setf(error, -EINVAL, "invalid interface name in \"%s\"",
					  value);
	if ((s->n_ifaces == 0 || s->ifaces_allow_list == allow) && s->n_ifaces + n > NET_IFACES_MAX)
		return error_setf(error, -E2BIG, "too many interfaces (at most %d)",
				  NET_IFACES_MAX);
	if (s->n_ifaces == 0)
		s->ifaces_allow_list = allow;
	while (next_word(&p, word, sizeof(word), true) > 0) {
		ssize_t i = iface_find(s, word);
		char *copy;

		if (s->ifaces_allow_list != allow) {
			if (i >= 0) {
				free(s->ifaces[i]);
				s->ifaces[i] = s->ifaces[--s->n_ifaces];
			}
			continue;
		}
		if (i >= 0)
			continue;
		copy = strdup(word);
		if (!copy || array_append(&s->ifaces, &s->n_ifaces, &copy, 1, sizeof(copy)) < 0) {
			free(copy);
			return -ENOMEM;
		}
	}
	return 0;
}

/* systemd's parse_boolean(). */
static int boolean_parse(const char *v)
{
	static const char *const yes[] = {"1", "yes", "y", "true", "t", "on"};
	static const char *const no[] = {"0", "no", "n", "false", "f", "off"};

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -EINVAL;
}

int net_settings_set(struct net_settings *s, const char *name, const char *value, char **error)
{
	int k;

	if (strcmp(name, "IPAddressAllow") == 0)
		return ip_assign(&s->ip_allow, &s->n_ip_allow, value, error);
	if (strcmp(name, "IPAddressDeny") == 0)
		return ip_assign(&s->ip_deny, &s->n_ip_deny, value, error);
	if (strcmp(name, "SocketBindAllow") == 0)
		return bind_assign(&s->bind_allow, &s->n_bind_allow, value, error);
	if (strcmp(name, "SocketBindDeny") == 0)
		return bind_assign(&s->bind_deny, &s->n_bind_deny, value, error);
	if (strcmp(name, "RestrictNetworkInterfaces") == 0)
		return ifaces_assign(s, value, error);
	if (strcmp(name, "IPAccounting") == 0) {
		/* An empty value is the default, off (the user manager's DefaultIPAccounting=). */
		k = value[0] == '\0' ? 0 : boolean_parse(value);
		if (k < 0)
			return error_setf(error, -EINVAL,
					  "IPAccounting= takes a boolean, not \"%s\"", value);
		s->ip_accounting = k;
		return 0;
	}
	return error_setf(error, -EINVAL, "unknown network setting \"%s\"", name);
}

int net_settings_assign(struct net_settings *s, const char *assignment, char **error)
{
	const char *eq = strchr(assignment, '=');
	char name[32];

	if (!eq || (size_t)(eq - assignment) >= sizeof(name))
		return error_setf(error, -EINVAL, "expected NAME=VALUE, not \"%s\"", assignment);
	memcpy(name, assignment, (size_t)(eq - assignment));
	name[eq - assignment] = '\0';
	return net_settings_set(s, name, eq + 1, error);
}

bool net_settings_want_ip(const struct net_settings *s)
{
	return s->n_ip_allow > 0 || s->n_ip_deny > 0 || s->ip_accounting;
}

bool net_settings_want_ifaces(const struct net_settings *s)
{
	return s->n_ifaces > 0;
}

bool net_settings_want_bind(const struct net_settings *s)
{
	return s->n_bind_allow > 0 || s->n_bind_deny > 0;
}

void net_prefix_to_ipv4_key(const struct net_prefix *p, struct net_ipv4_key *ret)
{
	*ret = (struct net_ipv4_key){.prefixlen = p->prefixlen};
	memcpy(ret->addr, p->addr, sizeof(ret->addr));
}

void net_prefix_to_ipv6_key(const struct net_prefix *p, struct net_ipv6_key *ret)
{
	*ret = (struct net_ipv6_key){.prefixlen = p->prefixlen};
	memcpy(ret->addr, p->addr, sizeof(ret->addr));
}
