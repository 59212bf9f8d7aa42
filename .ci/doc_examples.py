#!/usr/bin/env python3
"""Lists the public items of a crate whose documentation has no example.

Usage: doc_examples.py CRATE.json

CRATE.json is rustdoc's JSON output for one crate (`cargo +nightly rustdoc
-p CRATE --lib -- -Z unstable-options --output-format json`). rustdoc's own
`missing_doc_code_examples` lint checks functions and types but not their
methods, nor constants; this walks what a user can reach instead: every
item of a public module or re-export, and the methods and associated
constants of the inherent impls of its types, and the methods of its
traits. Associated types, fields and variants are left out (the trait's or
the type's example covers them), as is whatever carries `#[doc(hidden)]`.

Prints one path per item without a code block in its docs and exits 1 if
there is any.
"""

import json
import sys

CHECKED_KINDS = {
    "function",
    "struct",
    "enum",
    "union",
    "trait",
    "constant",
    "macro",
    "type_alias",
}


def main(path):
    crate = json.load(open(path))
    index = crate["index"]
    root = crate["root"]
    missing = []
    seen = set()

    def hidden(item):
        return any("doc(hidden)" in str(attr) for attr in item.get("attrs", []))

    def check(item, name):
        if "```" not in (item.get("docs") or ""):
            missing.append(name)

    def visit(item_id, prefix):
        item = index.get(str(item_id))
        if item is None or item_id in seen or hidden(item):
            return
        kind, inner = next(iter(item["inner"].items()))
        if kind == "use":
            visit(inner["id"], prefix)
            return
        seen.add(item_id)
        name = prefix + (item.get("name") or "")
        if kind == "module":
            below = "" if item_id == root else name + "::"
            for child in inner["items"]:
                visit(child, below)
            return
        if kind in CHECKED_KINDS:
            check(item, name)
        if kind == "trait":
            for member_id in inner["items"]:
                member = index[str(member_id)]
                if "function" in member["inner"] and not hidden(member):
                    check(member, f"{name}::{member.get('name')}")
        if kind not in ("struct", "enum", "union"):
            return
        for impl_id in inner.get("impls", []):
            impl_item = index.get(str(impl_id))
            if impl_item is None or hidden(impl_item):
                continue
            impl = impl_item["inner"]["impl"]
            if impl.get("trait") is not None or impl.get("blanket_impl") is not None:
                continue
            for member_id in impl["items"]:
                member = index[str(member_id)]
                if member.get("visibility") == "public" and not hidden(member):
                    check(member, f"{name}::{member.get('name')}")

    visit(root, "")
    for name in missing:
        print(name)
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    sys.exit(main(sys.argv[1]))
