#include "gui/help_text.h"

#include <QObject>

namespace bubblescope::gui {

QString helpHtml() {
  return QObject::tr(R"(
<h2>Concepts</h2>
<p><b>Step time</b>: for each step, from the earliest rank's start to the latest rank's end.</p>
<p><b>Compute, communication, wait</b>: per rank and step, the time covered by the union of
its compute spans (forward, backward, recompute, optimizer), of its collectives and transfers,
and of its waits on a pipeline peer that is not ready yet.</p>
<p><b>Bubble</b>: the share of a step in which a rank neither computes nor communicates —
waiting on a pipeline peer or idle, (wait + idle) / step time; the timeline hatches it red.</p>
<p><b>Timeline</b>: send → receive arrows appear once the spans they join are wide enough to
read (zoom in); flat grey "not indexed yet" time is still being read from the file (neither
busy nor bubble); in an interleaved run each model chunk's compute has its own shade.</p>
<p><b>Formula bubble</b>: GPipe and 1F1B leave (p−1)/(m+p−1) of the step idle with p stages
and m micro-batches; interleaved with v chunks per stage (p−1)/(v·m+p−1); ZB-H1 about a third
of 1F1B's, because weight gradients fill the cool-down.</p>
<p><b>Overlap</b>: the share of communication time hidden under computation,
|comm ∩ compute| / |comm|; the rest is <b>exposed communication</b>, which lengthens the step.</p>
<p><b>Utilisation</b>: compute / step time; <b>comm ratio</b>: communication / step time, also
split by the dimension of each collective (dp, tp, pp, zero, ep).</p>
<p><b>Idle</b>: step time minus |compute ∪ comm ∪ wait|.</p>
<p><b>Prediction</b>: the layout editor predicts the edited layout's step (the schedule simulator
over its op lists, costed from a calibration or, without one, from FLOPs); the Planner tab lists
the best layouts of a world size with their predictions; selecting one loads it into the
editor.</p>
<p><b>Memory formula</b>: with fp32 Adam a rank holding Ψ parameters keeps 4Ψ bytes of
parameters, 4Ψ of gradients and 8Ψ of optimizer states; ZeRO stage 1 divides the optimizer
states by dp, stage 2 also the gradients, stage 3 also the parameters.</p>

<h2>Keyboard and mouse</h2>
<table cellpadding="3">
<tr><td><b>Ctrl+O</b></td><td>open a trace file (or drop it on the window)</td></tr>
<tr><td><b>F5</b></td><td>reload the runs of the file</td></tr>
<tr><td><b>Ctrl+Q</b></td><td>quit</td></tr>
<tr><td><b>Ctrl+E</b> / <b>Ctrl+Shift+E</b></td><td>export the timeline / the charts (PNG or SVG)</td></tr>
<tr><td><b>Ctrl+1 … Ctrl+4</b></td><td>timeline, charts, metrics, compare</td></tr>
<tr><td><b>Ctrl+R</b></td><td>run the layout in the editor</td></tr>
<tr><td><b>Ctrl+Shift+R</b></td><td>run again with changes (keeps this run to compare)</td></tr>
<tr><td><b>Ctrl+.</b></td><td>stop the run</td></tr>
<tr><td><b>Ctrl+Shift+P</b></td><td>plan layouts (the Planner tab)</td></tr>
<tr><td><b>Ctrl+K</b></td><td>compare the two selected runs (or this run with the one before)</td></tr>
<tr><td><b>wheel</b> · <b>+</b> / <b>−</b> (Ctrl++ / Ctrl+-)</td><td>zoom around the cursor · around the centre</td></tr>
<tr><td><b>drag</b> · <b>←</b> / <b>→</b></td><td>pan</td></tr>
<tr><td><b>shift+wheel</b> · <b>↑</b> / <b>↓</b></td><td>scroll the ranks</td></tr>
<tr><td><b>Home</b></td><td>fit the whole run (and follow a live run)</td></tr>
<tr><td><b>]</b> / <b>[</b> (PgDn / PgUp)</td><td>next / previous step</td></tr>
<tr><td><b>shift+drag</b></td><td>measure an interval</td></tr>
<tr><td><b>click</b></td><td>outline a span and show its details</td></tr>
<tr><td><b>Esc</b></td><td>clear the measurement and the outlined span</td></tr>
<tr><td><b>click a bar</b></td><td>in a chart: show that rank or stage (or step) in the timeline</td></tr>
<tr><td><b>F1</b></td><td>this page</td></tr>
</table>
)");
}

}  // namespace bubblescope::gui
