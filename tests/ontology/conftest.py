import json

import pytest
from django.contrib.auth.models import Permission

from ontology.routing import data
from ontology.routing.corpus import ChunkRecord, Corpus
from ontology.routing.distribution import SkillSpec
from ontology.selectors import clear_corpus_cache

SEED_SKILLS = ("bioma_cerrado", "graos_soja_milho", "transicao_em_curso", "produtor_rural")
SEED_MESSAGE = "meu solo está com baixa nodulação no segundo ano de soja"
# A topic whose top two patterns are close by far more than the e5 vectors move between CPUs (margin
# ~0.01 against close_margin 0.10, top ~0.43 above min_confidence 0.35). "o solo da fazenda", used before,
# sat at the threshold: its margin was 0.1015 on an AVX-512 machine, under 0.10 on the one it was chosen on.
CLOSE_TOP_TWO = "o solo da minha fazenda"


@pytest.fixture(autouse=True)
def _fresh_corpus_cache():
    clear_corpus_cache()
    yield
    clear_corpus_cache()


@pytest.fixture(scope="session")
def sample_rows():
    return [json.loads(line) for line in data.SAMPLE_CHUNKS_FILE.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="session")
def corpus(sample_rows):
    """The bundled sample chunks as a pure in-memory corpus (no database)."""
    return Corpus(ChunkRecord.from_seed(r) for r in sample_rows)


@pytest.fixture(scope="session")
def skill_specs():
    return {s["id"]: SkillSpec.from_seed(s) for s in data.skills_file()["skills"]}


@pytest.fixture
def seed_skills(skill_specs):
    return [skill_specs[s] for s in SEED_SKILLS]


@pytest.fixture
def validator(curator):
    """A curator holding ontology.validate_critical_chunk."""
    curator.user_permissions.add(Permission.objects.get(codename="validate_critical_chunk"))
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(pk=curator.pk)  # fresh permission cache


@pytest.fixture
def sample_chunks(db, validator, sample_rows):
    """Every sample chunk ingested and indexed (critical ones validated by `validator`)."""
    from ontology.services import chunk_ingest

    for row in sample_rows:
        chunk_ingest(acting_user=None, record=row, validator=validator)
    return sample_rows
