"""Fill msgstr entries of a .po catalog from a JSON map {msgid: translation}; report what is still missing.

    python scripts/fill_po.py vtt/translations/ko/LC_MESSAGES/messages.po translations.json

A helper for translators: ``make messages`` extracts and updates the catalogs, this fills them, and
``tests/test_i18n.py`` fails while any message is untranslated.
"""

from __future__ import annotations

import json
import sys

from babel.messages.pofile import read_po, write_po


def main(po_path: str, json_path: str) -> None:
    with open(po_path, "rb") as handle:
        catalog = read_po(handle)
    with open(json_path, encoding="utf-8") as handle:
        given = json.load(handle)
    for message in catalog:
        if not message.id:
            continue
        key = message.id if isinstance(message.id, str) else message.id[0]
        if key in given:
            message.string = given[key] if isinstance(message.id, str) else tuple(given[key])
            message.flags.discard("fuzzy")
    with open(po_path, "wb") as handle:
        write_po(handle, catalog, width=120)
    missing = [m.id for m in catalog if m.id and not (m.string if isinstance(m.string, str) else all(m.string))]
    print(f"{len(missing)} untranslated" + "".join(f"\n  {m!r}" for m in missing[:40]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
