// A small live line graph (memory, CPU) for the Run tab: points (x in ms since the code
// started, y a value) drawn scaled to the widget, with the title and the latest value.
// When a run ends without points it says the backend could not measure.
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>
#include <functional>
#include <vector>

namespace cordon::inspector {

class SparkGraph : public QWidget {
  Q_OBJECT

 public:
  // `format` turns a value into the text shown (e.g. "42.0 MiB").
  SparkGraph(QString title, std::function<QString(double)> format, QWidget* parent = nullptr);

  void clear();
  void add_point(double x_ms, double y);
  // No point came: say so instead of an empty graph.
  void set_unmeasured(const QString& why);
  [[nodiscard]] const std::vector<QPointF>& points() const { return points_; }
  [[nodiscard]] QString caption() const;
  [[nodiscard]] QSize sizeHint() const override { return {220, 56}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QString title_;
  std::function<QString(double)> format_;
  std::vector<QPointF> points_;
  QString unmeasured_;
};

}  // namespace cordon::inspector
