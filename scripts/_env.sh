# Shared by scripts/bootstrap, scripts/peers and scripts/newer_python: where an environment
# comes from. Sourced, not run.
#
# Every environment is installed from a lock in locks/ (scripts/lock writes them) and stamped
# with the lock's hash, so a changed lock re-installs and an unchanged one costs nothing.
# A2A_LATEST=1 builds unlocked environments from today's releases instead, in folders of their
# own (.venv-latest, .venv-sdk03-latest): drift found on purpose, never by a new machine.

lock_hash() { cat "$@" | sha256sum | cut -c1-16; }

# The folder of an environment: NAME, or NAME-latest with A2A_LATEST=1.
env_dir() { if [ -n "${A2A_LATEST:-}" ]; then echo "$1-latest"; else echo "$1"; fi; }

# Where an environment came from, for scripts/test's opening lines.
origin_of() { cat "$1/.origin" 2>/dev/null || echo "not installed"; }
