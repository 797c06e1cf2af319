"""Services compose the pure core with adapters. They return data; they never print or exit."""
