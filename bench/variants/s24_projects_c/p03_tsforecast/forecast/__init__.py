"""Multi-horizon load forecasting with pytorch-ignite."""
