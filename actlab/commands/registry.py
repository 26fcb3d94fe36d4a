"""`actlab registry`: every claim's registered definition against the code, and registering a change.

Exits 1 naming the claims whose definition moved (`actlab.registry`); `--update` registers a change on purpose,
dated today, and `--post-hoc CLAIM_ID=REASON` one made after its runs were seen (its page then says so).
"""

from __future__ import annotations

import argparse

from actlab.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--update", action="store_true", help="register every changed or new definition, dated today")
    parser.add_argument(
        "--post-hoc",
        action="append",
        default=[],
        metavar="CLAIM_ID=REASON",
        help="with --update: mark this claim's definition as fixed after its runs were seen (repeatable)",
    )


def all_definitions() -> list:
    """Every study's registered claims (the report's and the zoo's)."""
    from actlab.studies.compare import claims as compare
    from actlab.studies.flexact import claims as flexact
    from actlab.studies.smartmixed import claims as smartmixed
    from actlab.studies.xielu import claims as xielu
    from actlab.studies.zoo import claims as zoo
    from actlab.theory import claims as theory

    found = []
    for module in (theory, flexact, smartmixed, xielu, compare, zoo):
        found.extend(module.definitions())
    ids = [d.claim_id for d in found]
    duplicated = sorted({cid for cid in ids if ids.count(cid) > 1})
    if duplicated:
        raise ValueError(f"two studies define the same claim id: {', '.join(duplicated)}")
    return found


def run(args: argparse.Namespace) -> int:
    from actlab import registry

    post_hoc = {}
    for item in args.post_hoc:
        claim_id, separator, reason = item.partition("=")
        if not separator or not claim_id or not reason.strip():
            raise UsageError(f"--post-hoc {item!r}: give CLAIM_ID=REASON, e.g. --post-hoc my-claim='margin set after'")
        post_hoc[claim_id] = reason.strip()
    if post_hoc and not args.update:
        raise UsageError("--post-hoc needs --update (it marks a definition as it is registered)")
    definitions = all_definitions()
    unknown = sorted(set(post_hoc) - {d.claim_id for d in definitions})
    if unknown:
        raise UsageError(f"--post-hoc names no registered claim: {', '.join(unknown)}; see `actlab registry`")
    if args.update:
        written = registry.update(definitions, post_hoc=post_hoc)
        print(f"registered {len(written)} definition(s) in {registry.REGISTRY_FILE.name}: {', '.join(written) or '-'}")
        return 0
    changed = registry.drift(definitions)
    if changed:
        print("definitions that differ from the registry (register them with `actlab registry --update`):")
        for claim_id in changed:
            print(f"  {claim_id}")
        return 1
    print(f"all {len(definitions)} claim definitions match the registry ({registry.REGISTRY_FILE.name})")
    return 0
