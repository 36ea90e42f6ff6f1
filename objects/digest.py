#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A system object's manifest from its template: "@DIGEST@" becomes the built object's
# "sha256:<hex>", so that a manifest always names the object built beside it.
import hashlib
import sys

template, obj, out = sys.argv[1:4]
with open(obj, 'rb') as f:
    digest = 'sha256:' + hashlib.sha256(f.read()).hexdigest()
with open(template, encoding='utf-8') as f:
    text = f.read()
if text.count('@DIGEST@') != 1:
    sys.exit(f'{template}: expected "@DIGEST@" exactly once')
with open(out, 'w', encoding='utf-8') as f:
    f.write(text.replace('@DIGEST@', digest))
