namespace bubblescope::storage { int storageVersion() { return 1; } }
