"""Mini-batch node classification with neighbour-sampled subgraphs."""
