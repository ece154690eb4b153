#!/usr/bin/env bash
# Build the Debian package with Debian's tooling (debhelper + dh-virtualenv): writes dist/harmless_<version>_<arch>.deb
#   bash packaging/build-deb.sh
# Needs: debhelper dh-virtualenv python3-venv python3-dev (apt) and PyPI (the bundled virtual environment under
# /opt/harmless is built from packaging/requirements.txt, less the test/interop-only packages listed below).
# The package layout lives in packaging/debian/; it is copied as debian/ into a copy of the source tree (the
# checkout stays untouched) and dpkg-buildpackage runs there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
[ -n "$VERSION" ] || { echo "error: pyproject.toml: version: not found (fix: version = \"X.Y.Z\" in [project])" >&2; exit 2; }
for t in dpkg-buildpackage dh dh_virtualenv; do
  command -v "$t" >/dev/null || { echo "error: $t: not installed (fix: apt-get install debhelper dh-virtualenv python3-venv python3-dev)" >&2; exit 2; }
done
#: in packaging/requirements.txt for the test suite and the Faucet interop tests only (not shipped)
TEST_ONLY='^(pytest|faucet|chewie|beka|pytricia|transitions)=='
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/harmless-$VERSION
mkdir -p "$SRC" dist
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf - | tar -xf - -C "$SRC"
else
  tar --exclude=./.venv --exclude=./dist --exclude=./.git -cf - . | tar -xf - -C "$SRC"
fi
rm -rf "$SRC/debian"
cp -a packaging/debian "$SRC/debian"
for unit in packaging/systemd/*.service; do          # dh_installsystemd takes debian/<package>.<unit>.service
  cp "$unit" "$SRC/debian/harmless.$(basename "$unit")"
done
grep -v -E "$TEST_ONLY" packaging/requirements.txt > "$SRC/debian/requirements-runtime.txt"
cat > "$SRC/debian/changelog" <<CHANGES
harmless ($VERSION) unstable; urgency=medium

  * Built from the HARMLESS source tree by packaging/build-deb.sh.

 -- HARMLESS maintainers <maintainers@harmless.invalid>  $(date -R)
CHANGES
t0=$(date +%s)
( cd "$SRC" && env PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg-buildpackage -us -uc -b ) > "$WORK/build.log" 2>&1 || {
  tail -50 "$WORK/build.log" >&2; echo "error: dpkg-buildpackage failed (log above)" >&2; exit 1; }
deb=$(ls "$WORK"/harmless_"$VERSION"_*.deb)
mv "$deb" dist/
echo "[build-deb] dist/$(basename "$deb"): $(du -h "dist/$(basename "$deb")" | cut -f1), built in $(( $(date +%s) - t0 )) s"
