"""Write the NAPALM ``mock`` driver's mocked data (``<case>/<method>.<n>``, JSON) for the Junos driver tests.

The configurations (``*.conf``) are hand-written in the format Junos prints for ``show configuration``
(NAPALM ``get_config``), including the volatile ``## Last commit`` header; the diffs follow ``show | compare``.
They are NOT recorded from a real device. Run ``python tests/drivers/mocked_data/junos/build.py`` after
editing a ``.conf`` file and commit the result.
"""
import json
import shutil
from pathlib import Path

HERE = Path(__file__).parent
ELS = (HERE / "els_original.conf").read_text()
ELS_AFTER = (HERE / "els_migrated.conf").read_text()
ELS_RESTORED = ELS.replace("2026-11-20 09:12:44", "2026-11-21 10:07:51")     # same config, newer commit stamp
LEGACY = (HERE / "legacy_original.conf").read_text()
FACTS = {"vendor": "Juniper", "model": "EX3400-24T", "os_version": "21.4R3-S5.4", "hostname": "sw3", "fqdn": "sw3",
         "serial_number": "NX0123456789", "uptime": 86400.0,
         "interface_list": [f"ge-0/0/{i}" for i in range(24)] + ["ge-0/0/25", "xe-0/2/0", "me0"]}
LEGACY_FACTS = dict(FACTS, model="EX4200-24T", os_version="12.3R12.4", hostname="sw4",
                    interface_list=[f"ge-0/0/{i}" for i in range(24)])
DIFF = """\
[edit interfaces ge-0/0/7 unit 0 family ethernet-switching vlan]
-       members users;
+       members hl107;
[edit interfaces ge-0/0/8 unit 0 family ethernet-switching]
+      interface-mode access;
[edit interfaces ge-0/0/8 unit 0 family ethernet-switching vlan]
-       members users;
+       members hl108;
[edit interfaces ge-0/0/10 unit 0 family ethernet-switching]
-      storm-control default;
[edit interfaces ge-0/0/10 unit 0 family ethernet-switching vlan]
-       members printers;
+       members hl110;
[edit interfaces ge-0/0/25 unit 0]
-      family ethernet-switching;
+      family ethernet-switching {
+          interface-mode trunk;
+          vlan {
+              members [ hl107 hl108 hl110 ];
+          }
+      }
[edit vlans]
+   hl107 {
+       vlan-id 107;
+   }
+   hl108 {
+       vlan-id 108;
+   }
+   hl110 {
+       vlan-id 110;
+   }"""
REVERSE_DIFF = "\n".join(("-" + ln[1:]) if ln.startswith("+") else ("+" + ln[1:]) if ln.startswith("-") else ln
                         for ln in DIFF.splitlines())
LOAD_ERROR = {"exception": "napalm.base.exceptions.MergeConfigException",
              "args": ["[{'source': None, 'edit_path': '[edit vlans]', 'bad_element': 'hl110', "
                       "'message': 'syntax error', 'severity': 'error'}]"]}

CASES = {
    # backup -> merge -> compare -> commit -> facts -> restore -> running equals the backup
    "round_trip": {
        "get_facts": [FACTS, FACTS], "get_config": [ELS, ELS, ELS_AFTER, ELS_AFTER, ELS_RESTORED, ELS_RESTORED],
        "load_merge_candidate": [{}], "compare_config": [{"diff": DIFF}, {"diff": REVERSE_DIFF}],
        "commit_config": [{}, {}], "load_replace_candidate": [{}],
        "get_interfaces": [{"ge-0/0/7": {"is_up": True, "is_enabled": True, "description": "host 7", "mtu": 1514,
                                         "speed": 1000.0, "mac_address": "00:00:5e:00:53:07", "last_flapped": -1.0},
                            "ge-0/0/12": {"is_up": False, "is_enabled": False, "description": "", "mtu": 1514,
                                          "speed": 1000.0, "mac_address": "00:00:5e:00:53:0c", "last_flapped": -1.0},
                            "ge-0/0/9": {"is_up": False, "is_enabled": True, "description": "", "mtu": 1514,
                                         "speed": 1000.0, "mac_address": "00:00:5e:00:53:09", "last_flapped": -1.0}}],
    },
    "legacy": {"get_facts": [LEGACY_FACTS], "get_config": [LEGACY]},
    # the device refuses a line while loading: NAPALM discards the candidate, nothing is committed
    "rejected_line": {"get_config": [ELS, ELS], "load_merge_candidate": [LOAD_ERROR]},
    # the NETCONF session dies during commit, after the device committed: apply() must restore the backup
    "lost_session": {
        "get_config": [ELS, ELS_AFTER, ELS_RESTORED], "load_merge_candidate": [{}],
        "compare_config": [{"diff": DIFF}, {"diff": REVERSE_DIFF}],
        "commit_config": [{"exception": "ncclient.transport.errors.SessionCloseError",
                           "args": ["Unexpected session close"]}, {}],
        "load_replace_candidate": [{}],
    },
    # commit confirmed 1; nobody confirms; Junos rolls back by itself; a late confirm fails
    "confirm_expired": {
        "get_config": [ELS, ELS_AFTER, ELS_RESTORED], "load_merge_candidate": [{}],
        "compare_config": [{"diff": DIFF}], "commit_config": [{}],
        "confirm_commit": [{"exception": "napalm.base.exceptions.CommitError",
                            "args": ["No pending commit-confirm found!"]}],
    },
}

if __name__ == "__main__":
    for case, methods in CASES.items():
        d = HERE / case
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        for method, replies in methods.items():
            for n, reply in enumerate(replies, 1):
                if method == "get_config":
                    reply = {"running": reply, "startup": "", "candidate": ""}
                (d / f"{method}.{n}").write_text(json.dumps(reply, indent=1) + "\n")
    print("written:", ", ".join(sorted(CASES)))
