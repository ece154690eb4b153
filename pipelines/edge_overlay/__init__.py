"""Non-tunnelling edge overlay (Kawashima & Matsuo): registry, flows, VIDs, the os-ken controller app."""
