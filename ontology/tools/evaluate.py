"""Print the held-out figures of the pattern and chunk-class models (aggregates only).

python ontology/tools/evaluate.py dev    # grouped 5-fold CV over train + dev (tune here)
python ontology/tools/evaluate.py test   # the served models (bundled + dev + train + agro) on test (report only)
python ontology/tools/evaluate.py test --chunks-file PATH   # the served chunk classifier on another set's test file

CONTEXTO_EMBEDDINGS=off gives the term models' figures.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from ontology.routing import evaluation  # noqa: E402


def main(split: str, chunks_file: str | None = None) -> None:
    if split == "test" and chunks_file:
        path = Path(chunks_file)
        out = {
            "chunks_test": evaluation.chunks_test(path=path).as_dict(),
            "chunks_test_without_first_4_words": evaluation.chunks_test(skip_words=4, path=path).as_dict()["accuracy"],
        }
    elif split == "dev":
        out = {
            "patterns_cv": evaluation.patterns_cv().as_dict(),
            "chunks_cv": evaluation.chunks_cv().as_dict(),
            "chunks_cv_without_first_4_words": evaluation.chunks_cv(skip_words=4).as_dict()["accuracy"],
            "bundled_chunks_by_a_model_that_never_saw_them": evaluation.bundled_chunks_by_a_model_that_never_saw_them().as_dict()[
                "accuracy"
            ],
        }
    else:
        out = {
            "patterns_test": evaluation.patterns_test().as_dict(),
            "chunks_test": evaluation.chunks_test().as_dict(),
            "chunks_test_without_first_4_words": evaluation.chunks_test(skip_words=4).as_dict()["accuracy"],
        }
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    args = sys.argv[1:]
    path = args[args.index("--chunks-file") + 1] if "--chunks-file" in args else None
    main(args[0] if args and not args[0].startswith("--") else "dev", path)
