#!/bin/bash
# ExecStart of scanout-vm-command.service: runs run.sh's command and leaves its exit status in the
# control share, as the busybox /init does.
ctl=/run/scanout-vm
echo "scanout-vm: systemd runs the command at $(cut -d' ' -f1 /proc/uptime) s" > /dev/console
/bin/bash $ctl/cmd.sh
status=$?
echo $status > $ctl/status
sync
echo "scanout-vm: command exited with $status; powering off" > /dev/console
