// RecentFiles: the most recently opened trace files, kept in QSettings.
#pragma once

#include <QString>
#include <QStringList>

namespace bubblescope::gui {

class RecentFiles {
 public:
  static constexpr int kMaxFiles = 10;

  // Most recent first; files that no longer exist are left out.
  static QStringList list();
  // Moves `path` (made absolute) to the front.
  static void add(const QString& path);
  static void clear();
};

}  // namespace bubblescope::gui
