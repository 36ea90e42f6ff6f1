/* SPDX-License-Identifier: MIT */
/* The figures of one run against the targets, printed, and all of them as JSON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static void json_stats(FILE *j, const char *key, const struct stats *s)
{
	fprintf(j,
		"\"%s\": {\"n\": %zu, \"median_us\": %.1f, \"p99_us\": %.1f, \"mean_us\": %.1f, "
		"\"min_us\": %.1f, \"max_us\": %.1f}",
		key, s->n, s->median, s->p99, s->mean, s->min, s->max);
}

void report(const struct results *r, const char *json_path)
{
	/* The targets, each as measured in this run against its limit. */
	const struct {
		const char *what;
		double value, limit;
		bool at_least; /* the value must reach the limit, not stay under it */
		const char *unit;
	} targets[] = {
		{"tiny load, broker / libbpf with CAP_BPF (b/a')",
		 r->broker[0].median / r->direct_bpf[0].median, 2.5, false, "x"},
		{"medium load, b/a'", r->broker[1].median / r->direct_bpf[1].median, 1.3, false,
		 "x"},
		{"large load, b/a'", r->broker[2].median / r->direct_bpf[2].median, 1.05, false,
		 "x"},
		{"bpfctl load / bpftool prog loadall, tiny",
		 r->ptool[0].n ? r->pload[0].median / r->ptool[0].median : NAN, 1.5, false, "x"},
		{"2 clients / 1 client, loads/s", r->conc[1].per_s / r->conc[0].per_s, 1.6, true,
		 "x"},
		{"list of 1,000 objects, median", r->named_list.median / 1000, 30, false, " ms"},
		{"daemon RSS idle", r->rss_idle / 1024.0, 4, false, " MiB"},
	};

	printf("\ntargets (this run; %s)\n", G.quick ? "quick: too few samples to judge"
						     : "compare ratios, not absolute figures");
	for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
		bool met = targets[i].at_least ? targets[i].value >= targets[i].limit
					       : targets[i].value <= targets[i].limit;

		printf("  %-46s %8.2f%s  %s %5.2f%s  %s\n", targets[i].what, targets[i].value,
		       targets[i].unit, targets[i].at_least ? ">=" : "<=", targets[i].limit,
		       targets[i].unit,
		       isnan(targets[i].value) ? "not measured (no bpftool)"
		       : met		       ? "met"
					       : "NOT MET");
	}

	if (json_path) {
		FILE *j = fopen(json_path, "we");

		if (!j)
			die("%s: %s", json_path, strerror(errno));
		fprintf(j, "{\n  \"quick\": %s,\n  \"kernel\": \"%s\",\n  \"cpus\": %ld,\n",
			G.quick ? "true" : "false", r->un.release, sysconf(_SC_NPROCESSORS_ONLN));
		fprintf(j,
			"  \"machine\": {\"hop_cross_cpu_us\": %.2f, \"hop_same_cpu_us\": %.2f, "
			"\"page_fault_us\": %.3f, \"fork_us\": %.1f, \"exit_wait_us\": %.1f},\n",
			r->prim.hop_cross_cpu_us, r->prim.hop_same_cpu_us, r->prim.page_fault_us,
			r->prim.fork_us, r->prim.exit_wait_us);
		fprintf(j, "  \"daemon_workers\": %d,\n  \"load\": [\n", r->nworkers);
		for (int i = 0; i < 3; i++) {
			fprintf(j, "    {\"object\": \"%s\", \"insns\": %u, \"bytes\": %zu,\n     ",
				r->objs[i].name, r->objs[i].insns, r->objs[i].size);
			json_stats(j, "direct", &r->direct[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "direct_cap_bpf", &r->direct_bpf[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "broker", &r->broker[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "broker_load_with_perfmon", &r->broker_perf[i]);
			fprintf(j,
				",\n     \"ratio_broker_direct\": %.3f, "
				"\"ratio_broker_direct_cap_bpf\": %.3f, "
				"\"ratio_broker_perfmon_direct\": %.3f}%s\n",
				r->broker[i].median / r->direct[i].median,
				r->broker[i].median / r->direct_bpf[i].median,
				r->broker_perf[i].median / r->direct[i].median, i < 2 ? "," : "");
		}
		fprintf(j, "  ],\n  \"exec_true\": {");
		json_stats(j, "process", &r->ptrue);
		fprintf(j, "},\n  \"process\": [\n");
		for (int i = 0; i < 3; i++) {
			fprintf(j, "    {\"object\": \"%s\", \"insns\": %u,\n     ",
				r->objs[i].name, r->objs[i].insns);
			json_stats(j, "bpfctl_load", &r->pload[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "bpfctl_run", &r->pctl[i]);
			if (r->ptool[i].n) {
				fprintf(j, ",\n     ");
				json_stats(j, "bpftool_loadall", &r->ptool[i]);
				fprintf(j, ",\n     \"ratio_bpfctl_load_bpftool\": %.3f",
					r->pload[i].median / r->ptool[i].median);
			}
			fprintf(j, "}%s\n", i < 2 ? "," : "");
		}
		fprintf(j,
			"  ],\n  \"concurrency\": {\"object\": \"tiny\", \"seconds\": %.2f, "
			"\"levels\": [\n",
			r->seconds);
		for (int i = 0; i < 5; i++) {
			fprintf(j,
				"    {\"clients\": %d, \"loads\": %zu, \"errors\": %zu, "
				"\"loads_per_s\": %.1f, ",
				r->conc[i].clients, r->conc[i].total, r->conc[i].errors,
				r->conc[i].per_s);
			json_stats(j, "latency", &r->conc[i].lat);
			fprintf(j, "}%s\n", i < 4 ? "," : "");
		}
		fprintf(j, "  ]},\n  \"policy_requests\": [\n");
		for (int i = 0; i < 2; i++) {
			fprintf(j,
				"    {\"connections\": %d, \"requests\": %zu, \"requests_per_s\": "
				"%.1f, ",
				r->pol[i].clients, r->pol[i].total, r->pol[i].per_s);
			json_stats(j, "latency", &r->pol[i].lat);
			fprintf(j, "}%s\n", i < 1 ? "," : "");
		}
		fprintf(j, "  ],\n  \"named\": {\"objects\": %d, \"list_json_bytes\": %zu,\n    ",
			N_NAMED, r->list_bytes);
		json_stats(j, "load", &r->named_load);
		fprintf(j, ",\n    ");
		json_stats(j, "load_first_100", &r->first100);
		fprintf(j, ",\n    ");
		json_stats(j, "load_last_100", &r->last100);
		fprintf(j, ",\n    ");
		json_stats(j, "list", &r->named_list);
		fprintf(j, ",\n    ");
		json_stats(j, "unload", &r->named_unload);
		fprintf(j,
			"},\n  \"rss_kib\": {\"idle\": %ld, \"workers_idle\": %ld, \"with_named\": "
			"%ld, \"loads\": %zu, \"after_loads\": %ld, \"idle_connections\": %d, "
			"\"with_connections\": %ld, \"daemon_fds_with_connections\": %d, "
			"\"after_connections_closed\": %ld},\n",
			r->rss_idle, r->wrss, r->rss_named, r->n_rss_loads, r->rss_loads, N_CONNS,
			r->rss_conns, r->conn_fds, r->rss_conns_closed);
		fprintf(j,
			"  \"single_use_workers\": {\"tiny_ratio_broker_direct_cap_bpf\": "
			"%.3f, \"loads_per_s_1\": %.1f, \"loads_per_s_2\": %.1f},\n  "
			"\"targets\": [\n",
			r->single_tiny.median / r->direct_bpf[0].median, r->single[0].per_s,
			r->single[1].per_s);
		for (size_t i = 0; i < ARRAY_SIZE(targets); i++)
			fprintf(j,
				"    {\"target\": \"%s\", \"value\": %.3f, \"limit\": %.3f, "
				"\"at_least\": %s}%s\n",
				targets[i].what, isnan(targets[i].value) ? -1.0 : targets[i].value,
				targets[i].limit, targets[i].at_least ? "true" : "false",
				i + 1 < ARRAY_SIZE(targets) ? "," : "");
		fprintf(j, "  ]\n}\n");
		if (fclose(j) != 0)
			die("%s: %s", json_path, strerror(errno));
		printf("\nwrote %s\n", json_path);
	}
}
