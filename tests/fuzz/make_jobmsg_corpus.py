#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the fuzz_jobmsg seed corpus (tests/fuzz/corpus/fuzz_jobmsg/).

The layout of daemon/shared/jobmsg.h (this machine's byte order, x86-64:
little-endian): struct jobmsg_header, the identity part (struct
jobmsg_ident_header, the groups, the unit's NUL-terminated strings), then
the params and one NUL. Seeds only: the daemon's one encoder is jobmsg.c,
and fuzz_jobmsg checks that what decodes encodes back to the same bytes.
"""
import os
import struct
import sys

MAGIC = 0x4A424642
SWEEP = 0x100
# enum proto_method_id (proto/method.h)
LOAD, LIST, ATTACH = 1, 2, 6
F_NETNS, F_RATE = 1, 2
CGROUP, UNIT, USER_UNIT = 1, 2, 4


def ident(uid, gid, pid, groups=(), cgroup=None, unit=None, user_unit=None, slices=(),
          user_slices=()):
    present = (CGROUP if cgroup else 0) | (UNIT if unit else 0) | (USER_UNIT if user_unit else 0)
    strs = [s for s in (cgroup, unit, user_unit) if s] + list(slices) + list(user_slices)
    body = b"".join(s.encode() + b"\0" for s in strs)
    return (struct.pack("<IIiIHHHHI", uid, gid, pid, len(groups), present, len(slices),
                        len(user_slices), 0, len(body))
            + b"".join(struct.pack("<I", g) for g in groups) + body)


def job(method, flags, id, ident_part, params):
    p = params.encode()
    return (struct.pack("<IHHIIqII", MAGIC, 1, method, flags, len(ident_part), id, len(p), 0)
            + ident_part + p + b"\0")


SEEDS = {
    "load": job(LOAD, F_RATE, 1, ident(1000, 1000, 4321, (10, 100)),
                '{"object_fd":0,"name":"x"}'),
    "list": job(LIST, 0, 7, ident(1000, 1000, 4321), "{}"),
    "attach_unit": job(ATTACH, F_NETNS | F_RATE, 9,
                       ident(1000, 1000, 42, (27,),
                             "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service",
                             "user@1000.service", "x.service",
                             ("user.slice", "user-1000.slice"), ("app.slice",)),
                       '{"object":"x","target":{"type":"cgroup","path":"/sys/fs/cgroup"}}'),
    "sweep": job(SWEEP, 0, 0, ident(1001, 0xFFFFFFFF, 0), ""),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_jobmsg")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
