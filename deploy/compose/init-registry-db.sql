create database registry;
