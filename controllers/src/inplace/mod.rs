//! The in-place update engine shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet.
