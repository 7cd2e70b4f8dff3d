"""Token classification (NER) fine-tuning on top of HF transformers."""
