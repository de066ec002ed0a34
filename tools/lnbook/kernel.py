"""A Jupyter kernel that runs a notebook's cells one at a time for the
grader (``lnbook.grading``), and the one-line text of a cell's
error."""

from __future__ import annotations

import nbformat


def _error(cell) -> dict | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out
    return None


def errmsg(err: dict) -> str:
    return f"{err['ename']}: {err['evalue']}".strip()


class Kernel:
    """Runs cells one by one in a kernel (nbclient), recording errors
    instead of stopping."""

    def __init__(self, nb, timeout: int, kernel: str, cwd):
        from nbclient import NotebookClient

        self.client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name=kernel,
            allow_errors=True,
            interrupt_on_timeout=True,
            resources={"metadata": {"path": str(cwd)}},
        )

    def __enter__(self):
        self._ctx = self.client.setup_kernel()
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self.cpu_seconds = self._cpu()
        return self._ctx.__exit__(*exc)

    def _cpu(self) -> float | None:
        """CPU seconds the kernel (and its children) used: a measure of the
        work done that, unlike wall-clock time, does not depend on how busy
        the machine is."""
        try:
            import psutil

            proc = psutil.Process(self.client.km.provisioner.process.pid)
            procs = [proc, *proc.children(recursive=True)]
            return sum(sum(p.cpu_times()[:2]) for p in procs)
        # a measurement only: absent where unavailable
        except Exception:  # noqa: BLE001
            return None

    def run(self, cell) -> dict | None:
        """Execute one code cell (in place); its error output, if any."""
        cell.outputs = []
        self.client.nb.cells.append(
            cell
        )  # nbclient stores the executed cell at its index
        self.client.execute_cell(cell, len(self.client.nb.cells) - 1)
        return _error(self.client.nb.cells[-1])

    def code(self, source: str) -> dict | None:
        return self.run(nbformat.v4.new_code_cell(source))
