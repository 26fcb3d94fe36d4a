"""The kernel client every notebook execution uses: ready as soon as the kernel has answered, not 0.2 s later.

Why: jupyter_client's `wait_for_ready` sends `kernel_info`, waits for the reply and for one IOPub message (so the
IOPub subscription is known to be live), then drains IOPub until no message has come for 0.2 s. That last wait
ends only by timing out: every client paid 0.2 s of idle time. A sweep run in a kept kernel connects twice (the
reset between runs, `actlab.sweep.kept_kernel`, and papermill's own client), so each run's `kernel_start` phase was
0.43 s, of which 0.4 s was these two waits (measured from the run records of `actlab report`).

Here the drain ends at the message that closes the exchange: the kernel's `status: idle` for our `kernel_info`
request, which ipykernel publishes after the reply. Everything the kernel publishes for that request has then
arrived, which is all the drain was for; the 0.2 s timeout stays as the bound when that message never comes.
The rest of the handshake (the reply, the IOPub check, a dead kernel, the overall timeout) is jupyter_client's.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.utils import ensure_async

DRAIN_TIMEOUT = 0.2  # seconds without an IOPub message after which the drain ends anyway (jupyter_client's)


class PromptKernelClient(AsyncKernelClient):
    """`AsyncKernelClient` whose `wait_for_ready` ends when the kernel is idle after its `kernel_info` reply."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.time() + (float("inf") if timeout is None else timeout)
        while True:
            request = self.kernel_info()
            reply = await _message(self.shell_channel, timeout=1)
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                first = await _message(self.iopub_channel, timeout=DRAIN_TIMEOUT)
                if first is not None:  # IOPub is connected
                    self._handle_kernel_info_reply(reply)
                    break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.time() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        message = first
        while message is not None and not _idle_after(message, request):
            message = await _message(self.iopub_channel, timeout=DRAIN_TIMEOUT)

    wait_for_ready = _async_wait_for_ready


async def _message(channel: Any, timeout: float) -> dict[str, Any] | None:
    """The channel's next message, or None if none comes within `timeout` seconds."""
    try:
        return await ensure_async(channel.get_msg(timeout=timeout))
    except Empty:
        return None


def _idle_after(message: dict[str, Any], request: str) -> bool:
    """True for the kernel's `status: idle` that closes the request with id `request`."""
    return (
        message.get("msg_type") == "status"
        and message.get("content", {}).get("execution_state") == "idle"
        and message.get("parent_header", {}).get("msg_id") == request
    )
