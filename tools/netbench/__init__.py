"""The network benchmark's parts: the throttling server, the media, the players and the figures
(tools/bench-network.py runs them)."""
