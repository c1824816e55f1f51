"""The shipped lexicon, its licence, and the script that rebuilds it from FreeDict."""

import gzip
import importlib.util
from pathlib import Path

import pytest

from knowledge.retrieval.expansion import LEXICON_PATH, load_lexicon

ROOT = Path(__file__).resolve().parents[3]


def _builder():
    spec = importlib.util.spec_from_file_location("build_lexicon", ROOT / "scripts" / "build_lexicon.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lexicon_ships_with_its_licence():
    licence = (LEXICON_PATH.parent / "LEXICON-LICENSE.md").read_text(encoding="utf-8")
    assert "GPL-2.0-or-later" in licence and "CC-BY-SA-3.0" in licence and "build_lexicon.py" in licence
    assert LEXICON_PATH.stat().st_size < 1_000_000  # compact
    with gzip.open(LEXICON_PATH, "rt", encoding="utf-8") as handle:
        first = handle.readline().rstrip("\n").split("\t")
    assert first[0] in {"en", "es", "pt"} and ":" in first[2]


def test_the_lexicon_reaches_portuguese_from_english_and_spanish():
    pt = load_lexicon("pt")
    assert "senh" in pt["password"] and "senh" in pt["contrasen"]  # senha
    assert "fer" in pt["vacat"]  # vacation → férias
    assert "password" not in pt.get("senh", ())  # one direction: into the catalog's language


def _fake_dictd(folder: Path, pair: str, entries: dict[str, str]) -> None:
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def enc(n: int) -> str:
        out = ""
        while True:
            out = b64[n % 64] + out
            n //= 64
            if not n:
                return out

    data, index = b"", []
    for head, body in entries.items():
        chunk = f"{head} /x/\n{body}\n".encode()
        index.append(f"{head}\t{enc(len(data))}\t{enc(len(chunk))}")
        data += chunk
    (folder / f"freedict-{pair}.index").write_text("\n".join(index) + "\n", encoding="utf-8")
    (folder / f"freedict-{pair}.dict.dz").write_bytes(gzip.compress(data, mtime=0))


def test_the_rebuild_script_reads_dictd_files_both_ways(tmp_path):
    builder = _builder()
    for pair in builder.PAIRS:
        _fake_dictd(tmp_path, pair, {})
    _fake_dictd(tmp_path, "eng-por", {"password": "senha", "invoice": "1. fatura, nota fiscal\n2. conta"})
    _fake_dictd(tmp_path, "spa-por", {"contraseña": "senha"})
    table = builder.build(tmp_path)
    assert table[("en", "password")] == ["pt:senha"]
    assert table[("en", "invoice")] == ["pt:fatura", "pt:conta"]  # phrases ("nota fiscal") are left out
    assert table[("pt", "senha")] == ["en:password", "es:contraseña"]
    (tmp_path / "freedict-por-spa.index").unlink()
    with pytest.raises(SystemExit, match="dict-freedict-por-spa"):
        builder.build(tmp_path)
