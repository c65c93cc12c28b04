// Placeholder translation unit until the runtime's first file lands.
namespace bubblescope::engine {
int engineVersion() { return 1; }
}  // namespace bubblescope::engine
