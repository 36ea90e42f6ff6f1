#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the fuzz_proto seed corpus (tests/fuzz/corpus/fuzz_proto/).

Input layout, as fuzz_proto.c reads it: flags byte (bits 0-1: max_bytes
choice), chunk count byte (1 + b % 8), per chunk 16-bit little-endian length
and fd count, then the concatenated payload.
"""
import json
import os
import struct
import sys


def seed(chunks, flags=0):
    out = bytes([flags, len(chunks) - 1])
    for data, n_fds in chunks:
        out += struct.pack("<HB", len(data), n_fds)
    return out + b"".join(d for d, _ in chunks)


def req(method, params=None, id=1, version=1):
    m = {"bpfbroker": version, "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m, separators=(",", ":")).encode()


LOAD_FULL = {
    "object_fd": 0,
    "object_name": "counter",
    "check_only": True,
    "libbpf_log": True,
    "name": "my-obj",
    "shares": [
        {"map": "counts", "user": "alice", "access": "ro"},
        {"map": "counts", "group": "1000", "access": "rw"},
    ],
    "globals": [{"name": "limit", "value": "0a000000"}],
    "map_sizes": [{"name": "counts", "max_entries": 128}],
    "programs": [{"name": "count", "type": "socket_filter",
                  "attach_type": "cgroup_inet_egress"}],
}

# The setup between open and load: map sizes, an inner map, a BTF target, a kernel attach type.
LOAD_SETUP = {
    "object_fd": 0,
    "map_defs": [{"name": "events", "value_size": 0},
                 {"name": "stacks", "key_size": 4, "value_size": 1016}],
    "inner_maps": [{"outer": "tables", "type": "array", "key_size": 4, "value_size": 8,
                    "max_entries": 16, "map_flags": 1}],
    "attach_targets": [{"program": "on_fork", "target": "sched_process_fork"}],
    "programs": [{"name": "unix_sendmsg", "type": "cgroup_sock_addr", "attach_type": "50"}],
}

LOAD_INSNS_FULL = {
    "insns_fd": 0,
    "type": "cgroup_device",
    "attach_type": "cgroup_device",
    "license": "GPL",
    "prog_name": "devices",
    "name": "ctr-1",
    "check_only": True,
}

SEEDS = {
    "load-minimal": [(req("load", {"object_fd": 0}), 1)],
    "load-full": [(req("load", LOAD_FULL, id=7), 1)],
    "load-fd2-of-3": [(req("load", {"object_fd": 2, "check_only": False}), 3)],
    "hello-policy-stream": [(req("hello", id=1), 0), (req("policy", id=2), 0),
                            (req("list", {}, id=3), 0),
                            (req("unload", {"name": "my-obj"}, id=4), 0)],
    "load-split": [(req("load", LOAD_FULL)[:40], 1), (req("load", LOAD_FULL)[40:], 1)],
    "bad-version": [(req("hello", version=2), 0)],
    "bad-too-many-fds": [(req("load", {"object_fd": 0}), 5)],
    "bad-nan": [(b'{"bpfbroker":1,"id":1,"method":"x","params":{"a":NaN}}', 0)],
    "bad-deep": [(b'{"a":' * 20 + b"1" + b"}" * 20, 0)],
    "bad-nul": [(b'{"bpfbroker":1,"id":1,\x00"method":"hello"}', 0)],
    "bad-trailing": [(req("hello") + b" {}", 0), (b"[1,2,3]", 0), (b"", 0)],
    "bad-big-id": [(b'{"bpfbroker":1,"id":18446744073709551615,"method":"hello"}', 0)],
    "bad-load-params": [(req("load", {"object_fd": 1, "globals": [{"name": "g", "value": "abc"}]}), 1),
                        (req("load", {"object_fd": 0, "shares": [{"map": "m", "user": "u", "group": "g", "access": "ro"}]}), 1)],
    "small-limit": [(req("load", LOAD_FULL), 1)],
    "load-setup": [(req("load", LOAD_SETUP, id=9), 1)],
    "bad-load-setup": [(req("load", {"object_fd": 0, "map_defs": [{"name": "m"}]}), 1),
                       (req("load", {"object_fd": 0, "inner_maps": [
                           {"outer": "o", "type": "array", "key_size": 4,
                            "value_size": 16777217, "max_entries": 1}]}), 1),
                       (req("load", {"object_fd": 0, "attach_targets": [
                           {"program": "p", "target": "../x"}]}), 1)],
    "load-insns-full": [(req("load_insns", LOAD_INSNS_FULL, id=8), 1)],
    "load-insns-minimal": [(req("load_insns", {"insns_fd": 0, "type": "socket_filter",
                                               "license": "Dual MIT/GPL"}), 1)],
    "bad-load-insns": [(req("load_insns", {"insns_fd": 1, "type": "x", "license": "GPL"}), 1),
                       (req("load_insns", {"insns_fd": 0, "type": "", "license": "G\nPL",
                                           "prog_name": "a-b", "globals": []}), 1)],
    "map-ops": [(req("map", {"object": "alice/counter", "map": "counts", "op": "info"}), 0),
                (req("map", {"object": "counter", "map": "counts", "op": "lookup",
                             "key": "00000000"}), 0),
                (req("map", {"object": "counter", "map": "counts", "op": "update",
                             "key": "00000000", "value": "0700000000000000", "flags": 1}), 0),
                (req("map", {"object": "counter", "map": "counts", "op": "dump",
                             "cursor": "03000000", "count": 16}), 0),
                (req("map", {"object": "counter", "map": "counts", "op": "next_key"}), 0)],
    "bad-map": [(req("map", {"object": "o", "map": "m", "op": "lookup", "value": "00"}), 0),
                (req("map", {"object": "o", "map": "m", "op": "update", "key": "0",
                             "value": "00", "flags": 4}), 0),
                (req("map", {"object": "o", "map": "m", "op": "dump", "count": 0}), 1)],
    # The named-object methods, decoded by the method table's field tables (proto/named.c).
    "named-methods": [(req("list", {"all": True, "cursor": "1000/x", "limit": 2}), 0),
                      (req("show", {"object": "alice/counter"}), 0),
                      (req("attach", {"object": "o", "program": "p", "pin": True,
                                      "target": {"type": "cgroup", "fd": 0,
                                                 "attach_type": "cgroup_inet_egress"}}), 1),
                      (req("attach", {"object": "o", "program": "p", "pin": True,
                                      "target": {"type": "uprobe", "fd": 0, "pidfd": 1,
                                                 "name": "main", "offset": 4,
                                                 "retprobe": True, "semaphore": "s"}}), 2),
                      (req("detach", {"object": "o", "program": "p", "link": 3}), 0),
                      (req("test_run", {"object": "o", "program": "p", "data_in": "00ff",
                                        "ctx_in": "", "repeat": 10}), 0),
                      (req("map_insert", {"object": "o", "map": "m", "key": "00000000",
                                          "fd": 0}), 1)],
    "bad-named-methods": [(req("list", {"limit": 0, "all": 1}), 0),
                          (req("attach", {"object": "o", "program": "p",
                                          "target": {"type": "xdp", "pidfd": 0}}), 0),
                          (req("attach", {"object": "o", "program": "p",
                                          "target": {"type": "uprobe", "fd": 0, "pidfd": 0,
                                                     "semaphore": "s",
                                                     "semaphore_offset": 8}}), 1),
                          (req("test_run", {"object": "o", "program": "p", "data_in": "abc"}), 0),
                          (req("policy", {"x": 1}), 0)],
    # Every array of load, each item decoded by its own table (proto/load_params.c).
    "load-arrays": [(req("load", {"object_fd": 0, "name": "obj",
                                  "shares": [{"map": "m", "group": "wheel", "access": "wo"}],
                                  "freeze": [{"name": "counts"}, {"name": "obj.bss"}],
                                  "map_defs": [{"name": "st", "key_size": 4}],
                                  "globals": [{"name": "g", "value": "ff"}]}), 1)],
    "bad-load-items": [(req("load", {"object_fd": 0, "freeze": [{"name": "m", "mode": 1}]}), 1),
                       (req("load", {"object_fd": 0, "shares": [{"map": "m", "user": "u",
                                                                 "access": "ro"}]}), 1),
                       (req("load", {"object_fd": 0, "name": "n", "shares": [
                           {"map": "m", "group": "g", "access": "consume"}]}), 1),
                       (req("load", {"object_fd": 0, "programs": [{"name": "p", "type": ""}],
                                     "name": "-x"}), 1),
                       (req("load", {"object_fd": 0, "map_sizes": [1]}), 1)],
    # Each op takes only its own params (the table's selector, "op").
    "map-ops-more": [(req("map", {"object": "o", "map": "m", "op": "delete", "key": "01"}), 0),
                     (req("map", {"object": "o", "map": "m", "op": "btf"}), 0),
                     (req("map", {"object": "o", "map": "m", "op": "dump"}), 0),
                     (req("map", {"object": "o", "map": "m", "op": "info", "key": "00"}), 0),
                     (req("map", {"object": "o", "map": "m", "op": "frob"}), 0)],
    # Texts json-c refuses, which the scanner and builder must refuse too.
    "bad-json": [(b'{"a":' + b"[" * 16 + b"]" * 16 + b"}", 0),
                 (b'{"a":1e999}', 0), (b'{"a":01}', 0), (b'{"a":"\\x"}', 0),
                 (b'{"a":[1,]}', 0), (b'{"a":"\xc0\xaf"}', 0), (b"{'a':1}", 0),
                 (b'{"a":1/**/}', 0)],
}
FLAGS = {"small-limit": 2}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_proto")
    os.makedirs(out, exist_ok=True)
    for name, chunks in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(seed(chunks, FLAGS.get(name, 0)))


if __name__ == "__main__":
    main()
