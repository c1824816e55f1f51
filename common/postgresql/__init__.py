"""Django's PostgreSQL backend with a pool check that costs no round trip when nothing happened
(``base.DatabaseWrapper``; ``ENGINE = "common.postgresql"`` in config/settings/base.py with the pool on)."""
