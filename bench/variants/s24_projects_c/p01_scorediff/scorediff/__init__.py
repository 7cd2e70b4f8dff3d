"""Score-based generative modelling with a VP-SDE, trained with HF accelerate."""

__version__ = "0.3.1"
