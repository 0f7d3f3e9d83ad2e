#include "spark_graph.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

namespace cordon::inspector {

SparkGraph::SparkGraph(QString title, std::function<QString(double)> format, QWidget* parent)
    : QWidget(parent), title_(std::move(title)), format_(std::move(format)) {
  setMinimumHeight(48);
  setToolTip(title_);
}

void SparkGraph::clear() {
  points_.clear();
  unmeasured_.clear();
  update();
}

void SparkGraph::add_point(double x_ms, double y) {
  points_.emplace_back(x_ms, y);
  unmeasured_.clear();
  update();
}

void SparkGraph::set_unmeasured(const QString& why) {
  unmeasured_ = why;
  update();
}

QString SparkGraph::caption() const {
  if (!unmeasured_.isEmpty()) return title_ + QStringLiteral(": ") + unmeasured_;
  if (points_.empty()) return title_;
  return title_ + QStringLiteral(": ") + format_(points_.back().y());
}

void SparkGraph::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const QRectF frame = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
  painter.setPen(palette().color(QPalette::Mid));
  painter.setBrush(palette().color(QPalette::Base));
  painter.drawRect(frame);
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(frame.adjusted(4, 2, -4, -2), Qt::AlignLeft | Qt::AlignTop, caption());
  if (points_.size() < 2) return;
  const auto [min_x, max_x] = std::ranges::minmax(points_, {}, &QPointF::x);
  const double max_y =
      std::max(1.0, std::ranges::max(points_, {}, &QPointF::y).y());  // zero-based y axis
  const double span_x = std::max(1.0, max_x.x() - min_x.x());
  const QRectF plot = frame.adjusted(2, 18, -2, -2);
  QPainterPath path;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const QPointF at(plot.left() + (points_[i].x() - min_x.x()) / span_x * plot.width(),
                     plot.bottom() - points_[i].y() / max_y * plot.height());
    if (i == 0) {
      path.moveTo(at);
    } else {
      path.lineTo(at);
    }
  }
  painter.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
  painter.setBrush(Qt::NoBrush);
  painter.drawPath(path);
}

}  // namespace cordon::inspector
