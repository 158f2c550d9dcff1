package io.eyrie.bench;

import io.eyrie.chirper.Chart;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A PNG of one or more panels side by side, each with line series over a numeric x axis (drawn
 * with Java2D, headless). Used by the Table 1 runner for throughput by partitions and for time
 * series.
 */
public final class LineChart {
  /** One line: a name, points (x, y), and a colour index. */
  public record Series(String name, double[] x, double[] y, int color) {}

  /** One panel: a title, axis labels, its series, and whether the x axis is log2 (partitions). */
  public record Panel(String title, String xLabel, String yLabel, List<Series> series, boolean log2X) {}

  private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
      new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0x17becf), new Color(0x7f7f7f)};
  private static final int PANEL_W = 420;
  private static final int PANEL_H = 320;
  private static final int LEFT = 70;
  private static final int TOP = 60;
  private static final int BOTTOM = 60;
  private static final int GAP = 40;

  private LineChart() {}

  /**
   * Writes the panels in one row under a title.
   *
   * @param file the PNG file
   * @param title the title
   * @param panels the panels
   * @throws IOException if it cannot be written
   */
  public static void write(Path file, String title, List<Panel> panels) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int width = panels.size() * (LEFT + PANEL_W + GAP) + 20;
    int height = TOP + PANEL_H + BOTTOM + 40;
    BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      g.drawString(title, 20, 25);
      for (int i = 0; i < panels.size(); i++) {
        panel(g, i * (LEFT + PANEL_W + GAP) + LEFT, TOP, panels.get(i));
      }
    } finally {
      g.dispose();
    }
    Chart.writePng(img, file);
  }

  private static void panel(Graphics2D g, int left, int top, Panel p) {
    double minX = Double.MAX_VALUE;
    double maxX = -Double.MAX_VALUE;
    double maxY = 0;
    for (Series s : p.series()) {
      for (int i = 0; i < s.x().length; i++) {
        double x = p.log2X() ? log2(s.x()[i]) : s.x()[i];
        minX = Math.min(minX, x);
        maxX = Math.max(maxX, x);
        maxY = Math.max(maxY, s.y()[i]);
      }
    }
    if (minX > maxX) {
      minX = 0;
      maxX = 1;
    }
    if (maxX == minX) {
      maxX = minX + 1;
    }
    double stepY = Chart.niceStep(Math.max(maxY, 1e-9) / 5);
    double topY = Math.max(stepY, Math.ceil(maxY / stepY) * stepY);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    g.setColor(Color.BLACK);
    g.drawString(p.title(), left, top - 28);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    FontMetrics fm = g.getFontMetrics();
    for (double v = 0; v <= topY + stepY / 2; v += stepY) {
      int py = top + PANEL_H - (int) Math.round(v / topY * PANEL_H);
      g.setColor(new Color(0xe0e0e0));
      g.drawLine(left, py, left + PANEL_W, py);
      g.setColor(Color.DARK_GRAY);
      String t = Chart.number(v);
      g.drawString(t, left - 6 - fm.stringWidth(t), py + 4);
    }
    List<Double> ticks = new ArrayList<>();
    if (p.log2X()) {
      for (double x = Math.floor(minX); x <= maxX + 1e-9; x++) {
        ticks.add(x);
      }
    } else {
      double stepX = Chart.niceStep((maxX - minX) / 8);
      for (double x = Math.ceil(minX / stepX) * stepX; x <= maxX + 1e-9; x += stepX) {
        ticks.add(x);
      }
    }
    for (double x : ticks) {
      int px = left + (int) Math.round((x - minX) / (maxX - minX) * PANEL_W);
      g.setColor(Color.DARK_GRAY);
      String t = p.log2X() ? Chart.number(Math.pow(2, x)) : Chart.number(x);
      g.drawString(t, px - fm.stringWidth(t) / 2, top + PANEL_H + 16);
    }
    g.setColor(Color.BLACK);
    g.drawRect(left, top, PANEL_W, PANEL_H);
    g.drawString(p.xLabel(), left + PANEL_W / 2 - fm.stringWidth(p.xLabel()) / 2, top + PANEL_H + 34);
    g.drawString(p.yLabel(), left, top - 8);
    int legendY = top + PANEL_H + 52;
    int legendX = left;
    for (Series s : p.series()) {
      Color c = COLORS[Math.floorMod(s.color(), COLORS.length)];
      Path2D.Double line = new Path2D.Double();
      g.setColor(c);
      for (int i = 0; i < s.x().length; i++) {
        double x = p.log2X() ? log2(s.x()[i]) : s.x()[i];
        double px = left + (x - minX) / (maxX - minX) * PANEL_W;
        double py = top + PANEL_H - s.y()[i] / topY * PANEL_H;
        if (i == 0) {
          line.moveTo(px, py);
        } else {
          line.lineTo(px, py);
        }
        if (p.log2X()) {
          g.fill(new Ellipse2D.Double(px - 3, py - 3, 6, 6));
        }
      }
      g.setStroke(new BasicStroke(2f));
      g.draw(line);
      g.setStroke(new BasicStroke(1f));
      g.fillRect(legendX, legendY - 9, 10, 10);
      g.setColor(Color.BLACK);
      g.drawString(s.name(), legendX + 14, legendY);
      legendX += 24 + fm.stringWidth(s.name());
    }
  }

  private static double log2(double v) {
    return Math.log(Math.max(v, 1e-9)) / Math.log(2);
  }


}
