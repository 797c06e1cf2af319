"""From approved lanes to the target: `kitty accept` and `kitty merge`."""
