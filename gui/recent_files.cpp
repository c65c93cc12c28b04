#include "gui/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace bubblescope::gui {

namespace {
const char* const kKey = "recentFiles";
}

QStringList RecentFiles::list() {
  QStringList out;
  for (const QString& f : QSettings().value(kKey).toStringList()) {
    if (QFileInfo::exists(f)) out << f;
  }
  return out;
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList files = QSettings().value(kKey).toStringList();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxFiles) files.removeLast();
  QSettings().setValue(kKey, files);
}

void RecentFiles::clear() {
  QSettings().remove(kKey);
}

}  // namespace bubblescope::gui
