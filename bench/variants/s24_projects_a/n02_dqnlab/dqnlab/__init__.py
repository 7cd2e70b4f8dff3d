"""dqnlab: Double-DQN with prioritised-free uniform replay."""
