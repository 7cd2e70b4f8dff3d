"""gnnprobe: GCN baselines with over-smoothing diagnostics."""
