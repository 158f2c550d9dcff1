package io.eyrie.chirper;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * Draws throughput and move rate over time as a PNG: two panels over one time axis, because the
 * two rates differ by orders of magnitude and one shared y axis would flatten the move rate.
 */
public final class Chart {
  private static final int WIDTH = 960;
  private static final int HEIGHT = 640;
  private static final int LEFT = 90;
  private static final int RIGHT = 30;
  private static final int TOP = 60;
  private static final int BOTTOM = 60;
  private static final int GAP = 60;
  private static final Color THROUGHPUT = new Color(0x1f77b4);
  private static final Color MOVES = new Color(0xd62728);
  private static final Color GRID = new Color(0xe0e0e0);

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
    BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, HEIGHT);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      centered(g, title, WIDTH / 2, 30);
      int panelHeight = (HEIGHT - TOP - BOTTOM - GAP) / 2;
      double maxX = Math.max(1, samples.size());
      panel(g, TOP, panelHeight, maxX, samples, s -> s.commands(), "throughput (commands/s)", THROUGHPUT);
      panel(g, TOP + panelHeight + GAP, panelHeight, maxX, samples, s -> s.moves(), "move rate (moves/s)", MOVES);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
      centered(g, "time since the load started (s)", LEFT + (WIDTH - LEFT - RIGHT) / 2, HEIGHT - 15);
    } finally {
      g.dispose();
    }
    writePng(img, file);
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

  private static void panel(Graphics2D g, int top, int height, double maxX, List<LoadRunner.Sample> samples,
      ToDoubleFunction<LoadRunner.Sample> y, String label, Color color) {
    int width = WIDTH - LEFT - RIGHT;
    double maxY = 0;
    for (LoadRunner.Sample s : samples) {
      maxY = Math.max(maxY, y.applyAsDouble(s));
    }
    double stepY = niceStep(Math.max(maxY, 1) / 5);
    double topY = Math.max(stepY, Math.ceil(maxY / stepY) * stepY);
    double stepX = niceStep(maxX / 10);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    FontMetrics fm = g.getFontMetrics();
    for (double v = 0; v <= topY + stepY / 2; v += stepY) {
      int py = top + height - (int) Math.round(v / topY * height);
      g.setColor(GRID);
      g.drawLine(LEFT, py, LEFT + width, py);
      g.setColor(Color.DARK_GRAY);
      String t = number(v);
      g.drawString(t, LEFT - 8 - fm.stringWidth(t), py + fm.getAscent() / 2 - 1);
    }
    for (double v = 0; v <= maxX + stepX / 2; v += stepX) {
      int px = LEFT + (int) Math.round(v / maxX * width);
      g.setColor(GRID);
      g.drawLine(px, top, px, top + height);
      g.setColor(Color.DARK_GRAY);
      centered(g, number(v), px, top + height + fm.getAscent() + 4);
    }
    g.setColor(Color.BLACK);
    g.drawRect(LEFT, top, width, height);
    Path2D.Double line = new Path2D.Double();
    for (LoadRunner.Sample s : samples) {
      // A sample counts what happened during second (i-1, i]: plot it in that interval's middle.
      double px = LEFT + (s.second() - 0.5) / maxX * width;
      double py = top + height - y.applyAsDouble(s) / topY * height;
      if (line.getCurrentPoint() == null) {
        line.moveTo(px, py);
      } else {
        line.lineTo(px, py);
      }
    }
    g.setColor(color);
    g.setStroke(new BasicStroke(2f));
    g.draw(line);
    g.setStroke(new BasicStroke(1f));
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    g.drawString(label, LEFT + 8, top - 8);
    Graphics2D rotated = (Graphics2D) g.create();
    try {
      rotated.setColor(Color.BLACK);
      rotated.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      rotated.rotate(-Math.PI / 2);
      centered(rotated, label.substring(label.indexOf('(') + 1, label.length() - 1), -(top + height / 2), 22);
    } finally {
      rotated.dispose();
    }
  }

  /** Rounds a raw tick step up to 1, 2 or 5 times a power of ten. */
  public static double niceStep(double raw) {
    if (raw <= 0) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(raw)));
    double f = raw / p;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return Math.max(nice * p, 1e-9);
  }

  /** Formats an axis label: integers with thousands separators, others with two decimals. */
  public static String number(double v) {
    if (Math.abs(v - Math.rint(v)) < 1e-9) {
      return String.format(Locale.ROOT, "%,d", (long) Math.rint(v));
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static void centered(Graphics2D g, String s, int x, int y) {
    g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, y);
  }
}
