"""`actlab registry`: every claim's registered definition against the code and the registry's history, and
registering a change.

Exits 1 naming the claims whose entry contradicts the history (an edited past entry, a `fixed_on` or `post_hoc`
unlike the history's: `actlab.registry_history`) or whose definition moved (`actlab.registry`); `--update` registers a
change on purpose, timed now (UTC) and appended to the history, and `--post-hoc CLAIM_ID=REASON` one made after its
runs were seen (its page then says so).
"""

from __future__ import annotations

import argparse

from actlab.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--update",
        action="store_true",
        help="register every changed or new definition, timed now (UTC), in the history",
    )
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
    path = registry.REGISTRY_FILE
    if not args.update:  # the file against its history first: it needs no study imported
        problems = registry.contradictions()
        if problems:
            print(
                f"the registry contradicts its history ({path}); it is append-only and written only by "
                f"`actlab registry --update`: restore it with `git checkout -- {path}`"
            )
            for problem in problems:
                print(f"  {problem}")
            return 1
    definitions = all_definitions()
    unknown = sorted(set(post_hoc) - {d.claim_id for d in definitions})
    if unknown:
        raise UsageError(f"--post-hoc names no registered claim: {', '.join(unknown)}; see `actlab registry`")
    if args.update:
        written = registry.update(definitions, post_hoc=post_hoc)
        print(f"registered {len(written)} definition(s) in {path.name}: {', '.join(written) or '-'}")
        return 0
    changed = registry.drift(definitions)
    if changed:
        print("definitions that differ from the registry (register them with `actlab registry --update`):")
        for claim_id in changed:
            print(f"  {claim_id}")
        return 1
    print(f"all {len(definitions)} claim definitions match the registry and its history ({path.name})")
    return 0
