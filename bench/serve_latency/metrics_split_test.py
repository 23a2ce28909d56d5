#!/usr/bin/env python3
"""metrics_split.py on two hand-written scrapes: the deltas, the means and the rest."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_split  # noqa: E402

BEFORE = """# HELP flashtick_request_duration_seconds arrival to Finish
flashtick_request_duration_seconds_sum{method="ModelInfer",model="m"} 1.0
flashtick_request_duration_seconds_count{method="ModelInfer",model="m"} 10
flashtick_queue_duration_seconds_sum{method="ModelInfer",model="m"} 0.2
flashtick_queue_duration_seconds_count{method="ModelInfer",model="m"} 10
flashtick_compute_duration_seconds_sum{method="ModelInfer",model="m"} 0.5
flashtick_compute_duration_seconds_count{method="ModelInfer",model="m"} 10
flashtick_request_duration_seconds_sum{method="ServerLive",model=""} 0.001
flashtick_request_duration_seconds_count{method="ServerLive",model=""} 1
"""
# 20 more ModelInfer requests: 0.1 s in all, 0.02 s queued, 0.06 s computing.
AFTER = BEFORE.replace("} 1.0\n", "} 1.1\n").replace(
    'flashtick_request_duration_seconds_count{method="ModelInfer",model="m"} 10',
    'flashtick_request_duration_seconds_count{method="ModelInfer",model="m"} 30').replace(
    "} 0.2\n", "} 0.22\n").replace(
    'flashtick_queue_duration_seconds_count{method="ModelInfer",model="m"} 10',
    'flashtick_queue_duration_seconds_count{method="ModelInfer",model="m"} 30').replace(
    "} 0.5\n", "} 0.56\n").replace(
    'flashtick_compute_duration_seconds_count{method="ModelInfer",model="m"} 10',
    'flashtick_compute_duration_seconds_count{method="ModelInfer",model="m"} 30')


class MetricsSplitTest(unittest.TestCase):
    def scrape(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return metrics_split.read(f.name)

    def test_means_of_the_requests_between_scrapes(self):
        rows = metrics_split.split(self.scrape(BEFORE), self.scrape(AFTER))
        self.assertEqual(len(rows), 1)  # ServerLive had no request between them
        meth, model, n, req, queue, compute, rest = rows[0]
        self.assertEqual((meth, model, n), ("ModelInfer", "m", 20))
        self.assertAlmostEqual(req, 5.0)
        self.assertAlmostEqual(queue, 1.0)
        self.assertAlmostEqual(compute, 3.0)
        self.assertAlmostEqual(rest, 1.0)

    def test_method_filter_and_no_requests(self):
        before, after = self.scrape(BEFORE), self.scrape(AFTER)
        self.assertEqual(metrics_split.split(before, after, "StreamTicks"), [])
        self.assertEqual(metrics_split.split(after, after), [])


if __name__ == "__main__":
    unittest.main()
