#!/usr/bin/env bash
# Installs Debian packages for cryptoscope without starting or enabling any service: the
# servers the tests use (nginx, OpenSSH, PostgreSQL, Slurm, munge, OpenVPN, strongSwan) are
# started by the tests themselves, on loopback or in network namespaces, and stopped again.
#
#   bash scripts/apt-install.sh PACKAGE...      (as root; scripts/setup.sh calls it)
#
# 1. While apt-get runs, package scripts may not start services: a policy-rc.d that answers
#    101 (invoke-rc.d's "action forbidden"), put in place only when the machine has none and
#    removed when this script ends, whatever ends it (an error, Ctrl-C, SIGTERM).
# 2. A policy-rc.d does not stop deb-systemd-helper from enabling units, nor update-rc.d from
#    adding SysV start links. So afterwards, every unit and init script shipped by a package
#    that this run newly installed (dependencies included) and enabled by this run is
#    disabled again, as an administrator would: `systemctl disable` (without systemd, the
#    unit's new links removed) and `update-rc.d NAME disable`. deb-systemd-helper's record
#    that the package enabled it is left as it is, so an upgrade of the package keeps the
#    unit disabled (its postinst re-enables only units whose links are all there). A unit or
#    script enabled before keeps its state, and nothing of a package installed before is
#    touched.
# 3. One line says what was installed and left disabled.
#
# CRYPTOSCOPE_APT_ROOT (default: empty, the machine itself) prefixes every path this script
# reads or writes, for its test (scripts/tests/test_apt_install.py), which puts fake
# dpkg-query, apt-get, systemctl and update-rc.d first on PATH.
set -euo pipefail
ROOT=${CRYPTOSCOPE_APT_ROOT:-}
(($#)) || { echo "usage: bash scripts/apt-install.sh PACKAGE..." >&2; exit 2; }

policy=$ROOT/usr/sbin/policy-rc.d
ours=""
cleanup() {
  if [[ -n "$ours" ]]; then
    rm -f "$policy"
    ours=""
  fi
}
trap cleanup EXIT
trap 'cleanup; trap - INT; kill -INT $$' INT
trap 'cleanup; trap - TERM; kill -TERM $$' TERM
trap 'cleanup; trap - HUP; kill -HUP $$' HUP
if [[ ! -e "$policy" && ! -L "$policy" ]]; then
  mkdir -p "$(dirname "$policy")"
  cat >"$policy.cryptoscope" <<'EOF'
#!/bin/sh
# Put here by cryptoscope's scripts/apt-install.sh while it installs packages, and removed
# after it: no service starts meanwhile.
exit 101
EOF
  chmod 755 "$policy.cryptoscope"
  mv "$policy.cryptoscope" "$policy"
  ours=1
fi

# Installed packages, one `name:arch` a line.
installed() {
  dpkg-query -W -f='${binary:Package}\t${db:Status-Abbrev}\n' 2>/dev/null | awk -F '\t' '$2 ~ /^ii/ { print $1 }' | sort -u
}
# What enables a unit or starts an init script at boot: systemd's .wants/.requires links and
# SysV's S links, one path a line (relative to ROOT).
enablers() {
  local d
  for d in "$ROOT/etc/systemd/system" "$ROOT"/etc/rc[0-6S].d; do
    [[ -d "$d" ]] || continue
    find "$d" -type l \( -path '*.wants/*' -o -path '*.requires/*' -o -name 'S[0-9][0-9]*' \) 2>/dev/null
  done | sed "s|^$ROOT||" | sort -u
}

before_pkgs=$(mktemp)
before_links=$(mktemp)
trap 'cleanup; rm -f "$before_pkgs" "$before_links"' EXIT
installed >"$before_pkgs"
enablers >"$before_links"

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "$@" >/dev/null
cleanup

# The packages this run installed, and what they ship that can start at boot.
mapfile -t new_pkgs < <(installed | comm -13 "$before_pkgs" -)
units=()
scripts=()
for p in "${new_pkgs[@]}"; do
  while IFS= read -r f; do
    case $f in
      /lib/systemd/system/*.service | /lib/systemd/system/*.socket | /lib/systemd/system/*.timer | \
        /lib/systemd/system/*.path | /usr/lib/systemd/system/*.service | /usr/lib/systemd/system/*.socket | \
        /usr/lib/systemd/system/*.timer | /usr/lib/systemd/system/*.path)
        units+=("${f##*/}") ;;
      /etc/init.d/*) scripts+=("${f##*/}") ;;
    esac
  done < <(dpkg-query -L "$p" 2>/dev/null)
done

# Enabled by this run: the units and init scripts above with a link that is new. A template
# (`name@.service`) is enabled through its instances' links (`name@x.service`).
re() { sed 's/[][\.*^$+?(){}|/]/\\&/g' <<<"$1"; }
enabled_by_run() {
  local links wants u s
  links=$(enablers | comm -13 "$before_links" -)
  wants=$(grep -E '\.(wants|requires)/' <<<"$links" || true)
  for u in "${units[@]}"; do
    if [[ "$u" == *@.* ]]; then
      grep -oE "/$(re "${u%%@*}")@[^/]+\.$(re "${u##*.}")\$" <<<"$wants" | sed 's|^/|unit |' || true
    elif grep -qE "/$(re "$u")\$" <<<"$wants"; then
      echo "unit $u"
    fi
  done
  for s in "${scripts[@]}"; do
    if grep -qE "/rc[0-6S]\.d/S[0-9][0-9]$(re "$s")\$" <<<"$links"; then
      echo "script $s"
    fi
  done
}
mapfile -t enabled < <(enabled_by_run | sort -u)
# systemctl works on the files alone (--root, as update-rc.d calls it), systemd running or not.
has_systemctl() { [[ -x "$ROOT/bin/systemctl" || -x "$ROOT/usr/bin/systemctl" ]]; }
disabled=()
for e in "${enabled[@]}"; do
  kind=${e%% *} name=${e#* }
  if [[ $kind == script ]]; then
    update-rc.d "$name" disable >/dev/null 2>&1 || true
  elif has_systemctl; then
    systemctl --root="${ROOT:-/}" --quiet disable "$name" >/dev/null 2>&1 || true
  else
    enablers | comm -13 "$before_links" - | grep -E "\.(wants|requires)/$(re "$name")\$" |
      while IFS= read -r l; do rm -f "$ROOT$l"; done
  fi
  disabled+=("${name%.service}")
done

# Anything of those still enabled is said, not hidden.
mapfile -t left < <(enabled_by_run)
if ((${#left[@]})); then
  echo "error: installed, and still enabled after disabling: ${left[*]#* }" >&2
  exit 1
fi
if ((${#disabled[@]})); then
  printf '==> installed %d packages; left disabled the services they enabled: %s (the tests start their own; systemctl enable NAME starts one at boot)\n' \
    "${#new_pkgs[@]}" "$(printf '%s\n' "${disabled[@]}" | sort -u | paste -sd ' ')" >&2
else
  printf '==> installed %d packages; none enabled a service\n' "${#new_pkgs[@]}" >&2
fi
