from common.registry_import import RegistryImportCommand
from conversations.context.services import SemanticRegistryFileError, semantic_registry_import


class Command(RegistryImportCommand):
    help = "Create or update semantic UI ids from a YAML or JSON file (all or nothing)."
    importer = semantic_registry_import
    file_error = SemanticRegistryFileError
