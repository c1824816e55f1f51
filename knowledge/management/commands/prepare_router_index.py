from django.core.management.base import BaseCommand

from knowledge.index_store import router_index_prepare

_SEGMENT = {
    "built": "written",
    "exists": "already on disk",
    "changed": "not written: the catalog changed while it was read (processes write their own)",
    "unavailable": "not written: the index directory cannot be used (each process keeps its own in memory)",
}
_VECTORS = {
    "built": "written",
    "exists": "already on disk",
    "none": "none stored (run embed_packages first)",
    "disabled": "embeddings are switched off",
    "unavailable": "not written: the index directory cannot be used",
}


class Command(BaseCommand):
    help = (
        "Write the active catalog's shared router index segment and entry vectors' file under "
        "KNOWLEDGE_INDEX_DIR unless they exist (what the Celery task knowledge.router_index_build does), "
        "so that web and worker processes map them instead of writing them. A deploy step: run it after "
        "load_catalog and embed_packages, before the processes start."
    )

    def handle(self, *args, **options):
        result = router_index_prepare()
        if result["status"] == "disabled":
            self.stdout.write("KNOWLEDGE_INDEX_DIR is not set: each process builds its index in memory.")
            return
        self.stdout.write(f"Router index segment (catalog v{result['version']}): {_SEGMENT[result['status']]}.")
        if "vectors" in result:
            self.stdout.write(f"Entry vectors' file: {_VECTORS[result['vectors']]}.")
        if result["status"] in ("changed", "unavailable") or result.get("vectors") == "unavailable":
            self.stderr.write("The processes will build what is missing themselves; see the log for the reason.")
