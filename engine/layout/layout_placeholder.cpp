// Placeholder translation unit until the first layout file lands.
namespace bubblescope::layout {
int layoutVersion() { return 1; }
}  // namespace bubblescope::layout
