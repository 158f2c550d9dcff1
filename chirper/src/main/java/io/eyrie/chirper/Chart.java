package io.eyrie.chirper;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws a load run over time as a PNG (JFreeChart): throughput, move rate, and the share of
 * commands that ran in one partition at once, in panels over one time axis, because the rates
 * differ by orders of magnitude and one shared y axis would flatten the move rate.
 */
public final class Chart {
  private static final int WIDTH = 960;
  private static final int HEIGHT = 800;

  private Chart() {}

  /**
   * Writes the chart.
   *
   * @param file the PNG file; its directory is created if needed
   * @param title the title line
   * @param samples one per second
   * @throws IOException if the file cannot be written
   */
  static void write(Path file, String title, List<LoadRunner.Sample> samples) throws IOException {
    System.setProperty("java.awt.headless", "true");
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("time since the load started (s)"));
    plot.setGap(14);
    plot.add(panel(samples, s -> s.commands(), "throughput (commands/s)", new Color(0x1f77b4)), 2);
    plot.add(panel(samples, s -> s.moves(), "moves/s", new Color(0xd62728)), 1);
    plot.add(panel(samples, s -> 100 * s.directShare(), "one-partition %", new Color(0x2ca02c)), 1);
    JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 16), plot, false);
    chart.setBackgroundPaint(Color.WHITE);
    writePng(chart.createBufferedImage(WIDTH, HEIGHT), file);
  }

  /** One panel; its axis label is short, since the lower panels are not tall. */
  private static XYPlot panel(List<LoadRunner.Sample> samples, ToDoubleFunction<LoadRunner.Sample> y, String label,
      Color color) {
    XYSeries series = new XYSeries(label);
    for (LoadRunner.Sample s : samples) {
      series.add(s.second(), y.applyAsDouble(s));
    }
    NumberAxis axis = new NumberAxis(label);
    axis.setAutoRangeIncludesZero(true);
    XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, samples.size() <= 60);
    r.setSeriesPaint(0, color);
    r.setSeriesStroke(0, new BasicStroke(2f));
    XYPlot p = new XYPlot(new XYSeriesCollection(series), null, axis, r);
    p.setBackgroundPaint(Color.WHITE);
    p.setDomainGridlinePaint(new Color(0xe0e0e0));
    p.setRangeGridlinePaint(new Color(0xe0e0e0));
    return p;
  }

  /** Writes an image as a PNG file, creating its directory. */
  public static void writePng(BufferedImage img, Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    if (dir != null) {
      Files.createDirectories(dir);
    }
    if (!ImageIO.write(img, "png", file.toFile())) {
      throw new IOException("no PNG writer available");
    }
  }
}
