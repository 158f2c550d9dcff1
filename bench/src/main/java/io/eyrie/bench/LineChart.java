package io.eyrie.bench;

import io.eyrie.chirper.Chart;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * A PNG of one or more panels side by side, each with line series over a numeric x axis (drawn
 * with JFreeChart, headless). Used by the Table 1 runner for throughput by partitions and for
 * time series.
 */
public final class LineChart {
  /** One line: a name, points (x, y), and a colour index. */
  public record Series(String name, double[] x, double[] y, int color) {}

  /** One panel: a title, axis labels, its series, and whether the x axis is log2 (partitions). */
  public record Panel(String title, String xLabel, String yLabel, List<Series> series, boolean log2X) {}

  private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
      new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0x17becf), new Color(0x7f7f7f)};
  private static final int PANEL_W = 480;
  private static final int PANEL_H = 380;
  private static final int TITLE_H = 56;

  private LineChart() {}

  /**
   * Writes the panels in one row under a title (the title has its own band, above the panels'
   * own titles).
   *
   * @param file the PNG file
   * @param title the title
   * @param panels the panels
   * @throws IOException if it cannot be written
   */
  public static void write(Path file, String title, List<Panel> panels) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int width = panels.size() * PANEL_W + 20;
    int height = TITLE_H + PANEL_H + 10;
    BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      g.drawString(title, 20, 28);
      for (int i = 0; i < panels.size(); i++) {
        chart(panels.get(i)).draw(g, new Rectangle2D.Double(10 + i * PANEL_W, TITLE_H, PANEL_W - 10, PANEL_H));
      }
    } finally {
      g.dispose();
    }
    Chart.writePng(img, file);
  }

  private static JFreeChart chart(Panel p) {
    XYSeriesCollection data = new XYSeriesCollection();
    XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
    for (int k = 0; k < p.series().size(); k++) {
      Series s = p.series().get(k);
      XYSeries xy = new XYSeries(s.name(), false, true);
      for (int i = 0; i < s.x().length; i++) {
        xy.add(s.x()[i], s.y()[i]);
      }
      data.addSeries(xy);
      r.setSeriesPaint(k, COLORS[Math.floorMod(s.color(), COLORS.length)]);
      r.setSeriesStroke(k, new BasicStroke(2f));
    }
    ValueAxis x;
    if (p.log2X()) {
      // partitions 1, 2, 4, 8 equally spaced, labelled as numbers
      LogAxis log = new LogAxis(p.xLabel());
      log.setBase(2);
      log.setTickUnit(new NumberTickUnit(1));
      log.setNumberFormatOverride(new DecimalFormat("0"));
      log.setSmallestValue(0.5);
      x = log;
    } else {
      x = new NumberAxis(p.xLabel());
      ((NumberAxis) x).setAutoRangeIncludesZero(false);
    }
    NumberAxis y = new NumberAxis(p.yLabel());
    y.setAutoRangeIncludesZero(true);
    XYPlot plot = new XYPlot(data, x, y, r);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(new Color(0xe0e0e0));
    plot.setRangeGridlinePaint(new Color(0xe0e0e0));
    JFreeChart chart = new JFreeChart(p.title(), new Font(Font.SANS_SERIF, Font.BOLD, 13), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }
}
