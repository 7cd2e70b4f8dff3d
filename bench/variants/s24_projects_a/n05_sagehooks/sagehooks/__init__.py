"""sagehooks: GraphSAGE node classification with layer-wise feature export."""
