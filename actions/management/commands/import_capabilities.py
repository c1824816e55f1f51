from actions.exceptions import CapabilityFileError
from actions.registry import capability_registry_import
from common.registry_import import RegistryImportCommand


class Command(RegistryImportCommand):
    help = "Create or update capabilities from a YAML or JSON file (all or nothing)."
    importer = capability_registry_import
    file_error = CapabilityFileError
