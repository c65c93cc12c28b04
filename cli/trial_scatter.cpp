#include "cli/trial_scatter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/run_description.h"

namespace bubblescope::cli {
namespace {

constexpr double kPanel = 380;  // a panel's plot area, px square
constexpr double kMargin = 60;  // left and bottom, for the axes' labels
constexpr double kTop = 50;     // above the panels, for the title
constexpr double kGap = 120;    // between the panels

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// An axis end at or above `v` with 5 round ticks: 5 times 1, 2, 2.5 or 5
// times a power of ten.
double axisEnd(double v) {
  if (!(v > 0)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v / 5)));
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (5 * f * p >= v) return 5 * f * p;
  }
  return 50 * p;
}

double meanOf(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v) {
    if (std::isfinite(x)) s += x, ++n;
  }
  return n > 0 ? s / n : std::nan("");
}

struct Point {
  double measured, predicted;
  std::string label;
};

// One panel at x offset `left`: axes, ticks, the y = x line, an optional
// ±band, the points.
std::string panel(double left, const std::vector<Point>& pts, const std::string& axisName,
                  double band) {
  double hi = 0;
  for (const Point& p : pts) hi = std::max({hi, p.measured, p.predicted});
  const double end = axisEnd(hi * 1.05);
  auto x = [&](double v) { return left + v / end * kPanel; };
  auto y = [&](double v) { return kTop + kPanel - v / end * kPanel; };
  std::string s;
  s += "<rect x='" + num(left) + "' y='" + num(kTop) + "' width='" + num(kPanel) + "' height='" +
       num(kPanel) + "' fill='#fafafa' stroke='#444'/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double v = end * i / 5;
    s += "<line x1='" + num(x(v)) + "' y1='" + num(y(0)) + "' x2='" + num(x(v)) + "' y2='" +
         num(y(0) + 5) + "' stroke='#444'/>";
    s += "<text x='" + num(x(v)) + "' y='" + num(y(0) + 18) + "' text-anchor='middle'>" + num(v) +
         "</text>\n";
    s += "<line x1='" + num(left - 5) + "' y1='" + num(y(v)) + "' x2='" + num(left) + "' y2='" +
         num(y(v)) + "' stroke='#444'/>";
    s += "<text x='" + num(left - 8) + "' y='" + num(y(v) + 4) + "' text-anchor='end'>" + num(v) +
         "</text>\n";
  }
  if (band > 0) {
    s += "<polygon points='" + num(x(0)) + "," + num(y(0)) + " " + num(x(end)) + "," +
         num(y(end * (1 + band))) + " " + num(x(end)) + "," + num(y(end * (1 - band))) +
         "' fill='#cfe3f7' stroke='none'/>\n";
  }
  s += "<line x1='" + num(x(0)) + "' y1='" + num(y(0)) + "' x2='" + num(x(end)) + "' y2='" +
       num(y(end)) + "' stroke='#1f5fa8' stroke-dasharray='6,4'/>\n";
  for (const Point& p : pts) {
    if (!std::isfinite(p.measured) || !std::isfinite(p.predicted)) continue;
    s += "<circle cx='" + num(x(p.measured)) + "' cy='" + num(y(p.predicted)) +
         "' r='4' fill='#d1495b'/>";
    s += "<text x='" + num(x(p.measured) + 5) + "' y='" + num(y(p.predicted) - 4) +
         "' font-size='9' fill='#333'>" + escape(p.label) + "</text>\n";
  }
  s += "<text x='" + num(left + kPanel / 2) + "' y='" + num(kTop + kPanel + 42) +
       "' text-anchor='middle'>measured " + axisName + "</text>\n";
  s += "<text transform='translate(" + num(left - 45) + "," + num(kTop + kPanel / 2) +
       ") rotate(-90)' text-anchor='middle'>predicted " + axisName + "</text>\n";
  return s;
}

std::string layoutLabel(const LayoutTrial& t) {
  const layout::Layout& l = t.layout;
  std::string name = runName(l);
  name = name.substr(0, name.rfind(' '));  // the model is the same for all
  name += " m" + std::to_string(l.microBatches);
  if (l.microBatchSize > 1) name += " b" + std::to_string(l.microBatchSize);
  if (l.recompute) name += " rc";
  return name;
}

}  // namespace

std::string trialScatterSvg(const std::vector<LayoutTrial>& trials, const std::string& title) {
  // Dots carry their number; the legend names the layouts.
  std::vector<Point> step, bubble;
  std::string legend;
  const double legendLeft = kMargin + kPanel + kGap + kPanel + 30;
  for (size_t i = 0; i < trials.size(); ++i) {
    const LayoutTrial& t = trials[i];
    const std::string n = std::to_string(i + 1);
    step.push_back({t.measuredStepNs / 1e6, t.prediction.stepNs / 1e6, n});
    bubble.push_back({100 * meanOf(t.measuredBubble), 100 * meanOf(t.prediction.bubble), n});
    legend += "<text x='" + num(legendLeft) + "' y='" + num(kTop + 12 + 16.0 * i) + "'>" + n +
              "  " + escape(layoutLabel(t)) + "</text>\n";
  }
  const double width = legendLeft + 200;
  const double height = kTop + kPanel + kMargin;
  std::string s =
      "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' "
      "width='" +
      num(width) + "' height='" + num(height) + "' font-family='sans-serif' font-size='11'>\n";
  s += "<rect width='100%' height='100%' fill='white'/>\n";
  s += "<text x='" + num(width / 2) + "' y='22' text-anchor='middle' font-size='14'>" +
       escape(title) + "</text>\n";
  s += panel(kMargin, step, "step time (ms)", 0.05);
  s += panel(kMargin + kPanel + kGap, bubble, "bubble, mean over stages (%)", 0);
  s += legend;
  s += "</svg>\n";
  return s;
}

}  // namespace bubblescope::cli
