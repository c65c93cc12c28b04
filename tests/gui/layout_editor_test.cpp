#include "gui/layout_editor.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>

#include "engine/layout/hostfile.h"
#include "gui/layout_problem_fields.h"
#include "gui/main_window.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

TEST(LayoutProblemFields, EachProblemGoesToTheFieldToChange) {
  EXPECT_EQ(fieldOfProblem("heads 4 is not divisible by tp 3"), "tp");
  EXPECT_EQ(fieldOfProblem("the model has 2 layers, fewer than pp 4 x virtual_chunks 1 = 4"), "pp");
  EXPECT_EQ(fieldOfProblem("schedule zb-h1 needs micro_batches >= pp, got micro_batches 1, pp 2"),
            "micro_batches");
  EXPECT_EQ(
      fieldOfProblem("schedule interleaved needs virtual_chunks >= 2 (with 1 chunk it is 1f1b)"),
      "virtual_chunks");
  EXPECT_EQ(fieldOfProblem("micro_batch_size must be >= 1, got 0"), "micro_batch_size");
  EXPECT_EQ(fieldOfProblem("micro_batches must be >= 1, got 0"), "micro_batches");
  EXPECT_EQ(fieldOfProblem("invalid model: hidden 30 is not divisible by heads 4"), "model");
  EXPECT_EQ(fieldOfProblem("hosts has an empty entry"), "hosts");
  EXPECT_EQ(fieldOfProblem("grad_compression int8 needs zero_stage 0 (ZeRO 1-3 reduce-scatter "
                           "their buckets uncompressed), got zero_stage 2"),
            "grad_compression");
  EXPECT_EQ(fieldOfProblem("all_reduce hierarchical needs zero_stage 0, got zero_stage 1"),
            "all_reduce");
  EXPECT_EQ(fieldOfProblem("ranks_per_node 3 does not divide the world's 4 ranks"),
            "ranks_per_node");
  EXPECT_EQ(fieldOfProblem("inter_node_gbps must be a finite number >= 0, got -1"),
            "inter_node_gbps");
  EXPECT_EQ(fieldOfProblem("inter_node_latency_us must be a finite number >= 0, got -1"),
            "inter_node_latency_us");
  EXPECT_EQ(fieldOfProblem("something else entirely"), "");
}

void writeText(const std::string& path, const char* text) {
  QFile f(QString::fromStdString(path));
  ASSERT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(text);
}

TEST(LayoutEditor, ShowsWorldSizeAndGlobalBatchAsYouType) {
  LayoutEditor editor;
  editor.findChild<QSpinBox*>("dp")->setValue(2);
  editor.findChild<QSpinBox*>("pp")->setValue(2);
  editor.findChild<QSpinBox*>("micro_batches")->setValue(4);
  editor.findChild<QSpinBox*>("micro_batch_size")->setValue(3);
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();
  // world 2·1·2 = 4; global batch 3·4·2 = 24 sequences of 32 tokens (tiny).
  EXPECT_TRUE(editor.summaryText().contains("4 ranks")) << editor.summaryText().toStdString();
  EXPECT_TRUE(editor.summaryText().contains("24 sequences"));
  EXPECT_TRUE(editor.summaryText().contains("768 tokens"));
  EXPECT_EQ(editor.layout().worldSize(), 4);

  editor.findChild<QSpinBox*>("dp")->setValue(1);
  editor.findChild<QSpinBox*>("pp")->setValue(1);
  editor.findChild<QSpinBox*>("micro_batches")->setValue(1);
  editor.findChild<QSpinBox*>("micro_batch_size")->setValue(1);
  EXPECT_TRUE(editor.summaryText().contains("World size:</b> 1 rank ·"))
      << editor.summaryText().toStdString();
  EXPECT_TRUE(editor.summaryText().contains("1 sequence (32 tokens)"))
      << editor.summaryText().toStdString();
}

TEST(LayoutEditor, RejectsANonDividingLayoutWithTheReasonAtTheField) {
  LayoutEditor editor;
  auto* run = editor.findChild<QPushButton*>("run");
  ASSERT_NE(run, nullptr);
  EXPECT_TRUE(run->isEnabled());
  editor.findChild<QSpinBox*>("tp")->setValue(3);  // tiny has 4 heads, hidden 32
  EXPECT_FALSE(editor.isValid());
  EXPECT_TRUE(editor.problemFor("tp").contains("heads 4 is not divisible by tp 3"))
      << editor.problemFor("tp").toStdString();
  auto* label = editor.findChild<QLabel*>("tp_problem");
  ASSERT_NE(label, nullptr);
  EXPECT_FALSE(label->isHidden());
  EXPECT_TRUE(label->text().contains("not divisible by tp 3"));
  EXPECT_TRUE(editor.problemFor("pp").isEmpty());
  EXPECT_FALSE(run->isEnabled());

  editor.findChild<QSpinBox*>("tp")->setValue(2);
  EXPECT_TRUE(editor.isValid());
  EXPECT_TRUE(label->isHidden());
  EXPECT_TRUE(run->isEnabled());
}

TEST(LayoutEditor, ChangingASizeMakesTheModelCustom) {
  LayoutEditor editor;
  editor.findChild<QSpinBox*>("layers")->setValue(4);
  EXPECT_EQ(editor.layout().model.preset, "custom");
  EXPECT_EQ(editor.layout().model.numLayers, 4);
  editor.findChild<QComboBox*>("model")->setCurrentText("small");
  EXPECT_EQ(editor.layout().model, layout::modelPreset("small").value());
}

TEST(LayoutEditor, SavesAndLoadsLayoutJson) {
  bubblescope::testing::TempDir dir;
  LayoutEditor editor;
  editor.findChild<QSpinBox*>("pp")->setValue(2);
  editor.findChild<QSpinBox*>("micro_batches")->setValue(4);
  editor.findChild<QComboBox*>("schedule")->setCurrentText("gpipe");
  editor.findChild<QComboBox*>("zero_stage")->setCurrentIndex(1);
  editor.findChild<QLineEdit*>("hosts")->setText("a:2, b:2");
  const QString path = QString::fromStdString(dir.file("l.json"));
  ASSERT_TRUE(editor.saveFile(path).isOk());

  LayoutEditor other;
  ASSERT_TRUE(other.loadFile(path).isOk());
  EXPECT_EQ(other.layout(), editor.layout());
  EXPECT_EQ(other.layout().hosts, (std::vector<std::string>{"a:2", "b:2"}));

  const Status bad = other.loadFile(QString::fromStdString(dir.file("missing.json")));
  EXPECT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("missing.json"), std::string::npos);
}

// The compression field round-trips through the layout JSON: a file's
// topk ratio (finer than the field's 4 decimals) comes back exactly, the
// argument field shows only for the kind that takes one, and what is picked
// in the fields is what the saved file says.
TEST(LayoutEditor, GradCompressionRoundTripsThroughTheLayoutJson) {
  bubblescope::testing::TempDir dir;
  LayoutEditor editor;
  auto* kind = editor.findChild<QComboBox*>("grad_compression");
  auto* ratio = editor.findChild<QDoubleSpinBox*>("grad_compression_ratio");
  auto* rank = editor.findChild<QSpinBox*>("grad_compression_rank");
  ASSERT_NE(kind, nullptr);
  ASSERT_NE(ratio, nullptr);
  ASSERT_NE(rank, nullptr);
  EXPECT_EQ(kind->currentText(), "none");
  EXPECT_EQ(editor.layout().gradCompression, layout::GradCompressionSpec{});
  EXPECT_TRUE(ratio->isHidden());
  EXPECT_TRUE(rank->isHidden());

  const std::string in = dir.file("topk.json");
  writeText(in, R"({"dp": 4, "grad_compression": "topk:0.00125"})");
  ASSERT_TRUE(editor.loadFile(QString::fromStdString(in)).isOk());
  EXPECT_EQ(kind->currentText(), "topk");
  EXPECT_FALSE(ratio->isHidden());
  EXPECT_TRUE(rank->isHidden());
  EXPECT_EQ(editor.layout().gradCompression.toString(), "topk:0.00125");
  const QString saved = QString::fromStdString(dir.file("saved.json"));
  ASSERT_TRUE(editor.saveFile(saved).isOk());
  auto fromFile = layout::layoutFromFile(saved.toStdString());
  ASSERT_TRUE(fromFile.isOk()) << fromFile.status().message();
  EXPECT_EQ(fromFile->gradCompression.toString(), "topk:0.00125");
  EXPECT_EQ(*fromFile, editor.layout());

  // Picked in the fields: powersgd rank 8, saved and loaded by another editor.
  kind->setCurrentText("powersgd");
  EXPECT_TRUE(ratio->isHidden());
  EXPECT_FALSE(rank->isHidden());
  rank->setValue(8);
  EXPECT_EQ(editor.layout().gradCompression.toString(), "powersgd:8");
  ASSERT_TRUE(editor.saveFile(saved).isOk());
  LayoutEditor other;
  ASSERT_TRUE(other.loadFile(saved).isOk());
  EXPECT_EQ(other.layout().gradCompression.toString(), "powersgd:8");
  EXPECT_EQ(other.layout(), editor.layout());

  // An edited ratio is the field's value.
  kind->setCurrentText("topk");
  ratio->setValue(0.25);
  EXPECT_EQ(editor.layout().gradCompression.toString(), "topk:0.25");
  for (const char* name : {"none", "fp16", "bf16", "int8"}) {
    kind->setCurrentText(name);
    EXPECT_EQ(editor.layout().gradCompression.toString(), name);
  }
}

// The all-reduce algorithm, the nodes and the emulated link round-trip
// through the layout JSON: a file's values (a bandwidth finer than the
// field's decimals included) come back exactly, and edited fields are what
// the saved file says.
TEST(LayoutEditor, AllReduceNodesAndLinkRoundTripThroughTheLayoutJson) {
  bubblescope::testing::TempDir dir;
  LayoutEditor editor;
  auto* algorithm = editor.findChild<QComboBox*>("all_reduce");
  auto* perNode = editor.findChild<QSpinBox*>("ranks_per_node");
  auto* gbps = editor.findChild<QDoubleSpinBox*>("inter_node_gbps");
  auto* latency = editor.findChild<QDoubleSpinBox*>("inter_node_latency_us");
  ASSERT_NE(algorithm, nullptr);
  ASSERT_NE(perNode, nullptr);
  ASSERT_NE(gbps, nullptr);
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(algorithm->currentText(), "flat");
  EXPECT_EQ(perNode->text(), "the hosts") << "0: the nodes are the hosts";
  EXPECT_EQ(gbps->text(), "not paced");
  const layout::Layout defaults;
  EXPECT_EQ(editor.layout().allReduce, defaults.allReduce);
  EXPECT_EQ(editor.layout().ranksPerNode, 0);
  EXPECT_EQ(editor.layout().interNodeGbps, 0.0);
  EXPECT_EQ(editor.layout().interNodeLatencyUs, 0.0);

  const std::string in = dir.file("hier.json");
  writeText(in, R"({"dp": 4, "all_reduce": "hierarchical", "ranks_per_node": 2,)"
                R"( "inter_node_gbps": 0.0125, "inter_node_latency_us": 37.25})");
  ASSERT_TRUE(editor.loadFile(QString::fromStdString(in)).isOk());
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();
  EXPECT_EQ(algorithm->currentText(), "hierarchical");
  EXPECT_EQ(perNode->value(), 2);
  EXPECT_EQ(editor.layout().allReduce, layout::AllReduceAlgorithm::kHierarchical);
  EXPECT_EQ(editor.layout().ranksPerNode, 2);
  EXPECT_EQ(editor.layout().interNodeGbps, 0.0125) << "not the field's rounded 0.013";
  EXPECT_EQ(editor.layout().interNodeLatencyUs, 37.25);
  const QString saved = QString::fromStdString(dir.file("saved.json"));
  ASSERT_TRUE(editor.saveFile(saved).isOk());
  auto fromFile = layout::layoutFromFile(saved.toStdString());
  ASSERT_TRUE(fromFile.isOk()) << fromFile.status().message();
  EXPECT_EQ(*fromFile, editor.layout());
  EXPECT_EQ(fromFile->interNodeGbps, 0.0125);

  gbps->setValue(2.5);
  latency->setValue(100);
  perNode->setValue(1);
  algorithm->setCurrentText("flat");
  ASSERT_TRUE(editor.saveFile(saved).isOk());
  LayoutEditor other;
  ASSERT_TRUE(other.loadFile(saved).isOk());
  EXPECT_EQ(other.layout().allReduce, layout::AllReduceAlgorithm::kFlat);
  EXPECT_EQ(other.layout().ranksPerNode, 1);
  EXPECT_EQ(other.layout().interNodeGbps, 2.5);
  EXPECT_EQ(other.layout().interNodeLatencyUs, 100.0);
  EXPECT_EQ(other.layout(), editor.layout());
}

// A node size that does not divide the world, and a hierarchical
// all-reduce with ZeRO, are refused at their fields.
TEST(LayoutEditor, NodeAndAllReduceProblemsShowAtTheirFields) {
  LayoutEditor editor;
  editor.findChild<QSpinBox*>("dp")->setValue(4);
  editor.findChild<QSpinBox*>("ranks_per_node")->setValue(3);
  EXPECT_FALSE(editor.isValid());
  EXPECT_TRUE(editor.problemFor("ranks_per_node").contains("ranks_per_node 3 does not divide"))
      << editor.problems().join("; ").toStdString();
  EXPECT_FALSE(editor.findChild<QPushButton*>("run")->isEnabled());
  editor.findChild<QSpinBox*>("ranks_per_node")->setValue(2);
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();

  editor.findChild<QComboBox*>("all_reduce")->setCurrentText("hierarchical");
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();
  editor.findChild<QComboBox*>("zero_stage")->setCurrentIndex(1);
  EXPECT_TRUE(editor.problemFor("all_reduce").contains("hierarchical needs zero_stage 0"))
      << editor.problems().join("; ").toStdString();
  EXPECT_FALSE(editor.findChild<QLabel*>("all_reduce_problem")->isHidden());
}

// Compression with ZeRO 1-3 is refused at the compression field, and Run is
// off until one of the two changes.
TEST(LayoutEditor, GradCompressionWithZeroShowsTheProblemAtItsField) {
  LayoutEditor editor;
  editor.findChild<QSpinBox*>("dp")->setValue(2);
  editor.findChild<QComboBox*>("grad_compression")->setCurrentText("int8");
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();
  editor.findChild<QComboBox*>("zero_stage")->setCurrentIndex(2);
  EXPECT_FALSE(editor.isValid());
  EXPECT_TRUE(editor.problemFor("grad_compression").contains("int8 needs zero_stage 0"))
      << editor.problems().join("; ").toStdString();
  EXPECT_FALSE(editor.findChild<QLabel*>("grad_compression_problem")->isHidden());
  EXPECT_FALSE(editor.findChild<QPushButton*>("run")->isEnabled());
  editor.findChild<QComboBox*>("grad_compression")->setCurrentText("none");
  EXPECT_TRUE(editor.isValid());
  EXPECT_TRUE(editor.findChild<QPushButton*>("run")->isEnabled());
}

// The Hostfile… button sits in the Hosts row; picking a file (here by path:
// no dialog) fills the hosts as `run --hostfile` reads the same file, and a
// layout that named a hostfile now names its hosts instead (a layout holds
// at most one of the two).
TEST(LayoutEditor, AHostfileFillsTheHostsAsRunHostfileReadsIt) {
  bubblescope::testing::TempDir dir;
  LayoutEditor editor;
  auto* button = editor.findChild<QPushButton*>("hostfile");
  ASSERT_NE(button, nullptr);
  auto* hosts = editor.findChild<QLineEdit*>("hosts");
  EXPECT_EQ(button->parentWidget(), hosts->parentWidget()) << "the button is next to the field";

  const std::string layoutPath = dir.file("hf.json");
  writeText(layoutPath, R"({"dp": 4, "hostfile": "cluster.txt"})");
  ASSERT_TRUE(editor.loadFile(QString::fromStdString(layoutPath)).isOk());
  EXPECT_EQ(editor.layout().hostfile, "cluster.txt");

  const std::string hostfile = dir.file("hosts.txt");
  writeText(hostfile, "# the cluster\nnode1 slots=2\n\nnode2 slots=2 # second\n");
  ASSERT_TRUE(editor.loadHostfile(QString::fromStdString(hostfile)).isOk());
  EXPECT_EQ(hosts->text(), "node1:2, node2:2");
  EXPECT_EQ(editor.layout().hosts, *layout::hostfileHosts(hostfile));
  EXPECT_EQ(editor.layout().hosts, (std::vector<std::string>{"node1:2", "node2:2"}));
  EXPECT_EQ(editor.layout().hostfile, "");
  EXPECT_TRUE(editor.isValid()) << editor.problems().join("; ").toStdString();

  // A file without hosts, or none at all: one message naming it, the field
  // as it was.
  const std::string empty = dir.file("empty.txt");
  writeText(empty, "# nothing here\n");
  const Status s = editor.loadHostfile(QString::fromStdString(empty));
  EXPECT_EQ(s.message(), "hostfile '" + empty + "' names no host");
  EXPECT_FALSE(editor.loadHostfile(QString::fromStdString(dir.file("missing.txt"))).isOk());
  EXPECT_EQ(hosts->text(), "node1:2, node2:2");
}

TEST(LayoutEditor, SamplesMenuListsTheShippedJsoncLayoutsAndLoadsOne) {
  const QStringList files = LayoutEditor::sampleFiles();
  ASSERT_FALSE(files.isEmpty()) << "no sample layouts found";
  bool has1f1b = false;
  for (const QString& f : files) {
    has1f1b |= QFileInfo(f).fileName() == "pp4-1f1b.jsonc";
    LayoutEditor editor;
    EXPECT_TRUE(editor.loadFile(f).isOk()) << f.toStdString();
  }
  EXPECT_TRUE(has1f1b) << files.join(", ").toStdString();

  LayoutEditor editor;
  QMenu* menu = editor.findChild<QToolButton*>("samples")->menu();
  ASSERT_NE(menu, nullptr);
  emit menu->aboutToShow();
  QAction* pick = nullptr;
  for (QAction* a : menu->actions()) {
    if (a->text() == "pp4-1f1b.jsonc") pick = a;
  }
  ASSERT_NE(pick, nullptr) << "the Samples menu does not list pp4-1f1b.jsonc";
  EXPECT_EQ(menu->actions().size(), files.size());
  pick->trigger();
  EXPECT_EQ(editor.layout().pp, 4);
  EXPECT_EQ(editor.layout().microBatches, 8);
  EXPECT_EQ(editor.layout().schedule, layout::ScheduleKind::kOneFOneB);
  EXPECT_EQ(editor.layout().model.preset, "small");
}

// In the window on a 1280 x 720 screen, a problem message under a field
// neither squashes the field nor is cut (issue 31: Samples > dp2-zero1, pp 4
// shrank the pp spin box to a few pixels): the fields scroll instead, and
// the Run button stays in sight.
TEST(LayoutEditor, AProblemMessageNeitherSquashesItsFieldNorIsCut) {
  MainWindow window;
  window.resize(1280, 720 - 70);  // the desktop's panel and the title bar
  window.show();
  LayoutEditor* editor = window.layoutEditor();
  QString sample;
  for (const QString& f : LayoutEditor::sampleFiles()) {
    if (QFileInfo(f).fileName() == "dp2-zero1.jsonc") sample = f;
  }
  ASSERT_FALSE(sample.isEmpty()) << "no dp2-zero1.jsonc sample";
  ASSERT_TRUE(editor->loadFile(sample).isOk());
  auto* pp = editor->findChild<QSpinBox*>("pp");
  pp->setValue(4);  // the tiny model has 2 layers
  ASSERT_FALSE(editor->problemFor("pp").isEmpty());
  QApplication::processEvents();
  auto* problem = editor->findChild<QLabel*>("pp_problem");
  ASSERT_NE(problem, nullptr);
  ASSERT_TRUE(problem->isVisible());
  EXPECT_GE(problem->height(), problem->heightForWidth(problem->width()))
      << "the message is cut: " << problem->text().toStdString();
  for (QWidget* field : editor->findChildren<QWidget*>()) {
    if (qobject_cast<QSpinBox*>(field) == nullptr && qobject_cast<QComboBox*>(field) == nullptr)
      continue;
    if (!field->isVisibleTo(editor)) continue;
    EXPECT_GE(field->height(), field->minimumSizeHint().height())
        << field->objectName().toStdString() << " is squashed";
  }
  auto* run = editor->findChild<QPushButton*>("run");
  const QRect runRect(run->mapTo(editor, QPoint(0, 0)), run->size());
  EXPECT_TRUE(editor->rect().contains(runRect)) << "the Run button is out of sight";
}

}  // namespace
}  // namespace bubblescope::gui
