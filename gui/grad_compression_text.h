// What a run's gradient compression did to its data-parallel bytes (issue 19),
// as the Charts tab says it: the grad_compression of the layout, the dp+zero
// bytes per step per rank that were sent, the uncompressed formula's bytes
// (planning/formulas.h, through the report's CommVolume) and their ratio.
// The numbers are the report's (storage/analysis: `report` prints the same
// line); nothing is measured here.
#pragma once

#include <QString>
#include <optional>

#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

struct GradCompressionFigures {
  QString spec;                                    // "topk:0.01", "none"
  std::optional<double> sentBytesPerStep;          // measured dp+zero, mean over ranks
  std::optional<double> uncompressedBytesPerStep;  // the formula's, without compression
  // uncompressed / sent: how many times fewer bytes crossed the dp group.
  std::optional<double> ratio() const;
};

// Unknown (nullopt) for a run without a known layout; a run with `none` has
// the figures too (its ratio is about 1), so a comparison shows both sides.
std::optional<GradCompressionFigures> gradCompressionFigures(const analysis::RunReport& report);

// "<b>Grad compression</b> topk:0.01: 1.2 MiB/step per rank sent against the
// uncompressed 120 MiB (ratio 100.00×)<br>", or "" when the run does not
// compress (or its figures are unknown).
QString gradCompressionHtml(const analysis::RunReport& report);

// The same figures for each compared run, one short line each, whether or
// not it compresses: "<b>Run 2</b> topk:0.01: 1.2 MiB/step sent, ratio
// 100.00×<br>" ("" when none of them has a known layout).
QString comparedCompressionHtml(const std::vector<analysis::RunReport>& reports);

}  // namespace bubblescope::gui
