"""Double-DQN with prioritised-free uniform replay, for Gymnasium Atari/classic control."""
