"""Tests of scripts/apt-install.sh: packages installed for cryptoscope start no service and
leave none enabled that the machine did not have.

The script runs against a temporary root (CRYPTOSCOPE_APT_ROOT, and ROOT for the fakes) with
fake dpkg-query, apt-get, systemctl and update-rc.d first on PATH. The fake apt-get installs
packages from a catalogue the test writes, as Debian's package scripts would: it ships unit
files and init scripts, enables units (deb-systemd-helper's links and its state file), adds
SysV start links, and starts services through the policy layer (invoke-rc.d asks
/usr/sbin/policy-rc.d; 101 forbids).
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "apt-install.sh")

FAKES = {
    "dpkg-query": r"""#!/bin/bash
db=$ROOT/var/lib/fake-dpkg
case $1 in
  -W) while read -r p; do [[ -n $p ]] && printf '%s:amd64\tii \n' "$p"; done <"$db/installed" ;;
  -L) cat "$db/${2%%:*}.list" 2>/dev/null || exit 1 ;;
esac
""",
    # apt-get update | install -y -qq --no-install-recommends PKG...
    "apt-get": r"""#!/bin/bash
[[ $1 == update ]] && exit 0
shift
db=$ROOT/var/lib/fake-dpkg
mkdir -p "$db"
touch "$db/installed"
if [[ -n ${FAKE_APT_WAIT:-} ]]; then
  touch "$FAKE_APT_WAIT"
  sleep 60
fi
install() {
  local p=$1 kind arg
  grep -qx "$p" "$db/installed" && return
  echo "$p" >>"$db/installed"
  : >"$db/$p.list"
  while read -r kind arg; do
    case $kind in
      dep) install "$arg" ;;
      unit) mkdir -p "$ROOT/lib/systemd/system"; touch "$ROOT/lib/systemd/system/$arg"
            echo "/lib/systemd/system/$arg" >>"$db/$p.list" ;;
      init) mkdir -p "$ROOT/etc/init.d"; touch "$ROOT/etc/init.d/$arg"; echo "/etc/init.d/$arg" >>"$db/$p.list"
            for r in 2 3 4 5; do mkdir -p "$ROOT/etc/rc$r.d"; ln -sf "../init.d/$arg" "$ROOT/etc/rc$r.d/S01$arg"; done ;;
      enable) mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants" "$ROOT/var/lib/systemd/deb-systemd-helper-enabled"
              ln -sf "/lib/systemd/system/$arg" "$ROOT/etc/systemd/system/multi-user.target.wants/${arg/@./@main.}"
              touch "$ROOT/var/lib/systemd/deb-systemd-helper-enabled/${arg/@./@main.}.dsh-also" ;;
      start) if [[ -x $ROOT/usr/sbin/policy-rc.d ]] && { "$ROOT/usr/sbin/policy-rc.d"; [[ $? == 101 ]]; }; then
               echo "forbidden $arg" >>"$ROOT/services.log"
             else
               echo "started $arg" >>"$ROOT/services.log"
             fi ;;
    esac
  done <"$FAKE_CATALOGUE/$p"
}
for a in "$@"; do [[ $a == -* ]] || install "$a"; done
exit "${FAKE_APT_STATUS:-0}"
""",
    # systemctl --root=ROOT --quiet disable UNIT (it removes the unit's links, and leaves
    # deb-systemd-helper's state alone)
    "systemctl": r"""#!/bin/bash
[[ $1 == --root=$ROOT && $3 == disable ]] || { echo "unexpected: $*" >>"$ROOT/helper.log"; exit 1; }
rm -f "$ROOT"/etc/systemd/system/*.wants/"$4"
echo "disable $4" >>"$ROOT/helper.log"
""",
    "update-rc.d": r"""#!/bin/bash
[[ $2 == disable ]] || exit 1
for l in "$ROOT"/etc/rc[0-6S].d/S[0-9][0-9]"$1"; do
  [[ -L $l ]] && mv "$l" "$(dirname "$l")/K01$1"
done
echo "disable $1" >>"$ROOT/helper.log"
""",
}

CATALOGUE = {
    "nginx-light": "dep nginx-common\n",
    "nginx-common": "unit nginx.service\ninit nginx\nenable nginx.service\nstart nginx\n",
    "postgresql": "dep postgresql-15\nunit postgresql.service\nenable postgresql.service\nstart postgresql\n",
    "postgresql-15": "unit postgresql@.service\nenable postgresql@.service\n",
    "libfoo": "",
    "openssh-server": "unit ssh.service\ninit ssh\nenable ssh.service\nstart ssh\n",
    "munge": "unit munge.service\nenable munge.service\n",
}


class AptInstall(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, "root")
        os.makedirs(os.path.join(self.root, "var/lib/fake-dpkg"))
        open(os.path.join(self.root, "var/lib/fake-dpkg/installed"), "w").close()
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for name, text in FAKES.items():
            p = os.path.join(self.bin, name)
            with open(p, "w") as f:
                f.write(text)
            os.chmod(p, 0o755)
        self.cat = os.path.join(self.tmp, "catalogue")
        os.makedirs(self.cat)
        for name, text in CATALOGUE.items():
            with open(os.path.join(self.cat, name), "w") as f:
                f.write(text)
        # The machine has systemd's systemctl (the fake on PATH does the work).
        os.makedirs(self.path("usr/bin"))
        with open(self.path("usr/bin/systemctl"), "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(self.path("usr/bin/systemctl"), 0o755)
        self.env = dict(os.environ, ROOT=self.root, CRYPTOSCOPE_APT_ROOT=self.root, FAKE_CATALOGUE=self.cat, PATH=self.bin + ":" + os.environ["PATH"])

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def install(self, *packages, **env):
        return subprocess.run(["bash", SCRIPT, *packages], env=dict(self.env, **env), capture_output=True, text=True)

    def preinstall(self, *packages):
        """Packages the machine had before, installed as the machine would have (enabled)."""
        r = subprocess.run(["apt-get", "install", "-y", *packages], env=self.env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def wants(self):
        d = self.path("etc/systemd/system/multi-user.target.wants")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def start_links(self, name):
        return [r for r in "0123456S" if os.path.lexists(self.path(f"etc/rc{r}.d/S01{name}"))]

    def log(self, name):
        p = self.path(name)
        if not os.path.exists(p):
            return []
        with open(p) as f:
            return f.read().split("\n")[:-1]

    def test_new_services_start_never_and_end_disabled(self):
        r = self.install("nginx-light", "postgresql", "libfoo")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Nothing started while installing: the package scripts met a policy-rc.d saying 101.
        self.assertEqual(self.log("services.log"), ["forbidden nginx", "forbidden postgresql"])
        # Nothing enabled afterwards: no wants link, no SysV start link (K links instead).
        self.assertEqual(self.wants(), [])
        self.assertEqual(self.start_links("nginx"), [])
        self.assertTrue(os.path.lexists(self.path("etc/rc2.d/K01nginx")))
        # The template's instance was found through its link and disabled by name.
        self.assertIn("disable postgresql@main.service", self.log("helper.log"))
        # deb-systemd-helper's record that the packages enabled them stays: an upgrade of
        # the package then finds its links missing and leaves it disabled.
        self.assertEqual(sorted(os.listdir(self.path("var/lib/systemd/deb-systemd-helper-enabled"))),
                         ["nginx.service.dsh-also", "postgresql.service.dsh-also", "postgresql@main.service.dsh-also"])
        # Our policy-rc.d is gone again.
        self.assertFalse(os.path.lexists(self.path("usr/sbin/policy-rc.d")))
        self.assertIn("installed 5 packages; left disabled the services they enabled: nginx postgresql postgresql@main", r.stderr)

    def test_without_systemd_the_new_links_are_removed_by_hand(self):
        os.unlink(self.path("usr/bin/systemctl"))
        self.preinstall("openssh-server")
        r = self.install("nginx-light", "postgresql")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wants(), ["ssh.service"])
        self.assertEqual([l for l in self.log("helper.log") if "postgresql" in l or "nginx.service" in l], [])
        self.assertEqual(self.start_links("nginx"), [])

    def test_what_the_machine_had_enabled_keeps_its_state(self):
        self.preinstall("openssh-server")
        # A link left by an earlier install of munge (removed, not purged): enabled before.
        os.symlink("/lib/systemd/system/munge.service", self.path("etc/systemd/system/multi-user.target.wants/munge.service"))
        r = self.install("nginx-light", "munge", "openssh-server")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wants(), ["munge.service", "ssh.service"])
        self.assertEqual(self.start_links("ssh"), ["2", "3", "4", "5"])
        self.assertEqual(self.start_links("nginx"), [])
        self.assertNotIn("disable ssh", " ".join(self.log("helper.log")))
        self.assertNotIn("disable munge", " ".join(self.log("helper.log")))
        self.assertIn("installed 3 packages; left disabled the services they enabled: nginx (", r.stderr)

    def test_an_existing_policy_is_left_as_it_was(self):
        policy = self.path("usr/sbin/policy-rc.d")
        os.makedirs(os.path.dirname(policy))
        with open(policy, "w") as f:
            f.write("#!/bin/sh\n# the machine's own\nexit 101\n")
        os.chmod(policy, 0o750)
        r = self.install("nginx-light")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(policy) as f:
            self.assertEqual(f.read(), "#!/bin/sh\n# the machine's own\nexit 101\n")
        self.assertEqual(os.stat(policy).st_mode & 0o777, 0o750)
        self.assertEqual(self.wants(), [])

    def test_a_failed_install_removes_our_policy(self):
        r = self.install("nginx-light", FAKE_APT_STATUS="100")
        self.assertEqual(r.returncode, 100)
        self.assertFalse(os.path.lexists(self.path("usr/sbin/policy-rc.d")))

    def test_an_interrupted_install_removes_our_policy(self):
        ready = os.path.join(self.tmp, "apt-running")
        p = subprocess.Popen(["bash", SCRIPT, "nginx-light"], env=dict(self.env, FAKE_APT_WAIT=ready),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(ready):  # polled: apt-get has started, our policy is in place
            self.assertLess(time.monotonic(), deadline, "the fake apt-get never started")
            if p.poll() is not None:
                self.fail(f"the script ended before apt-get started: {p.communicate()}")
            time.sleep(0.02)
        self.assertTrue(os.path.exists(self.path("usr/sbin/policy-rc.d")))
        os.killpg(p.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
        p.communicate(timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertFalse(os.path.lexists(self.path("usr/sbin/policy-rc.d")))

    def test_nothing_to_install_is_a_usage_error(self):
        r = self.install()
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage", r.stderr)


if __name__ == "__main__":
    unittest.main()
